"""train's TensorBoard events (issue 33), read back with the tensorboard package's own reader:
one events file in the run folder, one scalar per metrics.csv column (the step column is the
events' step), each value metrics.csv's, every step once, through --stop-at-step and --resume,
and through a resume after a run that died past its last checkpoint. LEGALNET_BIN_DIR names
the tools."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("LEGALNET_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin"))
EVENTS = "events.out.tfevents.train"
TRAIN = ["--arch", "mlp", "--hidden", "16", "--max-steps", "12", "--batch-size", "16", "--eval-every", "3",
         "--checkpoint-every", "100", "--threads", "1", "--device", "cpu", "--precision", "fp32", "--quiet"]

try:
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError:  # checked by the test, which says what is missing
    EventAccumulator = None


def train(data, out, *extra):
    subprocess.run([os.path.join(BIN, "train"), "--data", data, "--out", out, *TRAIN, *extra], check=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def metrics(folder):
    with open(os.path.join(folder, "metrics.csv"), newline="") as f:
        return list(csv.DictReader(f))


@unittest.skipIf(EventAccumulator is None, "the tensorboard package is not installed (scripts/requirements.txt)")
class TensorBoardEvents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        pgn, cls.data = os.path.join(cls.dir, "g.pgn"), os.path.join(cls.dir, "d.h5")
        subprocess.run([os.path.join(BIN, "gen_moves"), "--games", "12", "--seed", "3", "--out", pgn, "--quiet"],
                       check=True)
        subprocess.run([os.path.join(BIN, "tensorize"), "--in", pgn, "--out", cls.data, "--quiet"], check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_run(self, folder):
        """The run's events, as TensorBoard reads them, are its metrics.csv; returns the rows."""
        self.assertEqual(sorted(f for f in os.listdir(folder) if "tfevents" in f), [EVENTS])
        path = os.path.join(folder, EVENTS)
        first = next(iter(event_file_loader.EventFileLoader(path).Load()))
        self.assertEqual(first.file_version, "brain.Event:2")
        rows = metrics(folder)
        steps = [int(r["step"]) for r in rows]
        self.assertEqual(len(steps), len(set(steps)), f"a step twice in metrics.csv: {steps}")
        events = EventAccumulator(folder, size_guidance={"scalars": 0})
        events.Reload()
        tags = [c for c in rows[0] if c != "step"]
        self.assertEqual(sorted(events.Tags()["scalars"]), sorted(tags))
        for tag in tags:
            scalars = events.Scalars(tag)
            self.assertEqual([s.step for s in scalars], steps, tag)
            self.assertEqual([s.value for s in scalars], [float(np.float32(float(r[tag]))) for r in rows], tag)
        return rows

    def test_a_run_s_events_are_its_metrics(self):
        out = os.path.join(self.dir, "straight")
        train(self.data, out)
        rows = self.check_run(out)
        self.assertEqual([int(r["step"]) for r in rows], [3, 6, 9, 12])

    def test_a_resumed_run_appends_each_step_once(self):
        straight, paused = os.path.join(self.dir, "whole"), os.path.join(self.dir, "paused")
        train(self.data, straight)
        train(self.data, paused, "--stop-at-step", "7")
        self.assertEqual([int(r["step"]) for r in metrics(paused)], [3, 6])
        # A run that died after writing steps 9 and 12 (and half a record) past its checkpoint at
        # step 7: the resumed run writes those steps again, and they are there once.
        died = os.path.join(self.dir, "died")
        shutil.copytree(paused, died)
        for name in ("metrics.csv", EVENTS):
            shutil.copy(os.path.join(straight, name), os.path.join(died, name))
        with open(os.path.join(died, EVENTS), "ab") as f:
            f.write(b"\x30\x00\x00\x00\x00\x00")
        for folder in (paused, died):
            train(self.data, folder, "--resume")
            rows = self.check_run(folder)
            self.assertEqual([int(r["step"]) for r in rows], [3, 6, 9, 12], folder)
            # The same run as the one never stopped: its losses, step for step.
            np.testing.assert_allclose([float(r["val_loss"]) for r in rows],
                                       [float(r["val_loss"]) for r in metrics(straight)], rtol=1e-4)

    def test_force_moves_the_events_with_the_run_it_replaces(self):
        out = os.path.join(self.dir, "forced")
        train(self.data, out)
        before = read(os.path.join(out, EVENTS))
        train(self.data, out, "--force", "--stop-at-step", "4")  # replaced/ is kept until a model is saved
        self.assertEqual(read(os.path.join(out, "replaced", EVENTS)), before)
        self.assertEqual([int(r["step"]) for r in self.check_run(out)], [3])


if __name__ == "__main__":
    sys.exit(unittest.main())
