"""train's TensorBoard events (issue 33), read back with the tensorboard package's own reader:
one events file in the run folder, one scalar per metrics.csv column in its group (train/, val/,
perf/; the step column is the events' step), each value metrics.csv's, every step once, through
--stop-at-step and --resume, and through a resume after a run that died past its last checkpoint.
The run's hparams (the HParams plugin's experiment and session, parsed with its own protobufs) and
recipe (text), once a run; and evaluate's figures in the run's own evaluate events file at the
model's step (issue 62), replaced when the same model is evaluated again. LEGALNET_BIN_DIR names
the tools."""
import csv
import json
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
EVALUATE_EVENTS = "events.out.tfevents.train.evaluate"
# metrics.csv's columns (every one but the step) and their TensorBoard tags.
TAGS = {"epoch": "train/epoch", "samples": "train/samples", "train_loss": "train/loss", "lr": "train/lr",
        "val_loss": "val/loss", "precision": "val/precision", "recall": "val/recall", "f1": "val/f1",
        "samples_per_s": "perf/samples_per_s", "elapsed_s": "perf/elapsed_s"}
HEADLINE = ["eval/clean_games", "eval/illegal_pick_rate", "eval/adversary_clean_games",
            "eval/adversary_illegal_pick_rate", "eval/exact_sets"]
TRAIN = ["--arch", "mlp", "--hidden", "16", "--max-steps", "12", "--batch-size", "16", "--eval-every", "3",
         "--checkpoint-every", "100", "--threads", "1", "--device", "cpu", "--precision", "fp32", "--quiet"]

try:
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2
except ImportError:  # checked by the test, which says what is missing
    EventAccumulator = None


def train(data, out, *extra):
    subprocess.run([os.path.join(BIN, "train"), "--data", data, "--out", out, *TRAIN, *extra], check=True)


def evaluate(model, *extra):
    subprocess.run([os.path.join(BIN, "evaluate"), "--model", model, "--threads", "1", "--device", "cpu",
                    "--precision", "fp32", "--quiet", *extra], check=True, stdout=subprocess.DEVNULL)


def accumulated(folder):
    events = EventAccumulator(folder, size_guidance={"scalars": 0, "tensors": 0})
    events.Reload()
    return events


def tagged_values(path, tag):
    """Every value of `tag` in one events file, as (step, value) in file order."""
    return [(e.step, v) for e in event_file_loader.EventFileLoader(path).Load() for v in e.summary.value if v.tag == tag]


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

    def check_run(self, folder, evaluated=False):
        """The run's events, as TensorBoard reads them, are its metrics.csv; returns the rows."""
        self.assertEqual(sorted(f for f in os.listdir(folder) if "tfevents" in f),
                         [EVENTS, EVALUATE_EVENTS] if evaluated else [EVENTS])
        path = os.path.join(folder, EVENTS)
        first = next(iter(event_file_loader.EventFileLoader(path).Load()))
        self.assertEqual(first.file_version, "brain.Event:2")
        rows = metrics(folder)
        steps = [int(r["step"]) for r in rows]
        self.assertEqual(len(steps), len(set(steps)), f"a step twice in metrics.csv: {steps}")
        events = accumulated(folder)
        columns = [c for c in rows[0] if c != "step"]
        self.assertEqual(sorted(columns), sorted(TAGS))
        train_tags = [t for t in events.Tags()["scalars"] if not t.startswith(("eval/", "situations/"))]
        self.assertEqual(sorted(train_tags), sorted(TAGS.values()))
        for column in columns:
            scalars = events.Scalars(TAGS[column])
            self.assertEqual([s.step for s in scalars], steps, column)
            self.assertEqual([s.value for s in scalars], [float(np.float32(float(r[column]))) for r in rows], column)
        # The hparams and the recipe: once, with the run's first row.
        for tag in ("_hparams_/experiment", "_hparams_/session_start_info", "recipe"):
            self.assertEqual([step for step, _ in tagged_values(path, tag)], steps[:1], tag)
        return rows

    def test_a_run_s_events_are_its_metrics(self):
        out = os.path.join(self.dir, "straight")
        train(self.data, out)
        rows = self.check_run(out)
        self.assertEqual([int(r["step"]) for r in rows], [3, 6, 9, 12])

    def test_the_hparams_are_the_run_s_options(self):
        out = os.path.join(self.dir, "hparams")
        train(self.data, out, "--seed", "7", "--lr", "0.003")
        with open(os.path.join(out, "options.json")) as f:
            options = json.load(f)
        events = accumulated(out)
        content = events.PluginTagToContent("hparams")
        self.assertEqual(sorted(content), ["_hparams_/experiment", "_hparams_/session_start_info"])
        experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
        session = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
        hparams = session.session_start_info.hparams
        self.assertEqual(sorted(h.name for h in experiment.hparam_infos), sorted(hparams))
        self.assertEqual([m.name.tag for m in experiment.metric_infos], ["val/loss", "val/f1"] + HEADLINE)
        self.assertEqual(hparams["arch"].string_value, "mlp")
        self.assertEqual(hparams["hidden"].number_value, 16)
        for key in ("batch_size", "lr", "seed", "max_steps", "check_weight", "rare_weight", "pin_weight"):
            self.assertEqual(hparams[key].number_value, options[key], key)
        for key in ("input_kind", "compute_precision", "optimizer", "model_description"):
            self.assertEqual(hparams[key].string_value, options[key], key)
        self.assertEqual(hparams["device"].string_value, "cpu")
        self.assertEqual(hparams["geometric_head"].bool_value, options["model"]["geometric_head"])
        for provenance in ("command_line", "version", "data", "data_files"):
            self.assertNotIn(provenance, hparams)
        # The recipe as text: the command line and options.json.
        (recipe,) = events.Tensors("recipe")
        text = recipe.tensor_proto.string_val[0].decode()
        self.assertIn(options["command_line"], text)
        self.assertIn('"lr": 0.003', text)

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

    def test_evaluate_writes_its_figures_into_the_run_s_events(self):
        out = os.path.join(self.dir, "evaluated")
        train(self.data, out)
        positions = os.path.join(self.dir, "placements.fen")
        if not os.path.exists(positions):
            subprocess.run([os.path.join(BIN, "gen_moves"), "positions", "--start", "placement", "--count", "20",
                            "--seed", "4", "--out", positions], check=True, stdout=subprocess.DEVNULL)
        model, report = os.path.join(out, "model.safetensors"), os.path.join(self.dir, "evaluated.json")
        measure = ["--data", self.data, "--positions", positions, "--games", "2", "--adversary-games", "1",
                   "--max-plies", "20", "--seed", "6", "--report", report]
        evaluate(model, *measure)
        with open(report) as f:
            r = json.load(f)
        step = r["model"]["training"]["steps_done"]
        self.assertEqual(step, 12)
        expected = {
            "eval/clean_games": r["games"]["clean_games_share"],
            "eval/illegal_pick_rate": r["games"]["illegal_rate_per_pick"],
            "eval/adversary_clean_games": r["adversary_games"]["clean_games_share"],
            "eval/adversary_illegal_pick_rate": r["adversary_games"]["illegal_rate_per_pick"],
            "eval/exact_sets": r["dataset"]["exact_set_accuracy"],
            "eval/exact_sets/placements": r["position_sets"][0]["situations"]["with a legal move"]["exact_set_accuracy"],
            "eval/illegal_mass/placements": r["position_sets"][0]["situations"]["with a legal move"]["mean_illegal_mass"],
            "situations/in_check/exact": r["dataset"]["situations"]["in check"]["exact_set_accuracy"],
            "situations/in_check/illegal_mass": r["dataset"]["situations"]["in check"]["mean_illegal_mass"],
            "situations/with_a_legal_move/exact": r["dataset"]["situations"]["with a legal move"]["exact_set_accuracy"],
        }
        for again in (False, True):  # the same model evaluated twice: its figures replaced, not doubled
            events = accumulated(out)
            scalars = events.Tags()["scalars"]
            for tag, value in expected.items():
                self.assertEqual([(s.step, s.value) for s in events.Scalars(tag)], [(step, float(np.float32(value)))],
                                 (tag, again))
            for tag in HEADLINE:  # the metrics the hparams name
                self.assertIn(tag, scalars)
            for name, row in r["dataset"]["situations"].items():  # the card's rows with positions
                tag = "situations/" + name.replace(" (", "_").replace(")", "").replace(" ", "_")
                self.assertEqual(tag + "/exact" in scalars, row["positions"] > 0, tag)
            (command,) = events.Tensors("eval/command_line")
            self.assertEqual(command.step, step)
            self.check_run(out, evaluated=True)  # train's events as they were
            if not again:
                evaluate(model, *measure)
        # Nothing measured (--fen only), a copied model, and a folder trained again since: no figures.
        before = read(os.path.join(out, EVALUATE_EVENTS))
        evaluate(model, "--fen", "startpos")
        self.assertEqual(read(os.path.join(out, EVALUATE_EVENTS)), before)
        copied = os.path.join(self.dir, "copied")
        os.makedirs(copied, exist_ok=True)
        shutil.copy(model, copied)
        shutil.copy(os.path.join(out, EVENTS), copied)
        evaluate(os.path.join(copied, "model.safetensors"), "--data", self.data)
        self.assertNotIn(EVALUATE_EVENTS, os.listdir(copied))
        with open(os.path.join(out, "options.json")) as f:
            other = json.load(f)
        other["seed"] = 99  # another run's record
        with open(os.path.join(copied, "options.json"), "w") as f:
            json.dump(other, f)
        evaluate(os.path.join(copied, "model.safetensors"), "--data", self.data)
        self.assertNotIn(EVALUATE_EVENTS, os.listdir(copied))
        # train --force moves the evaluate events with the run it replaces.
        train(self.data, out, "--force", "--stop-at-step", "4")
        self.assertEqual(read(os.path.join(out, "replaced", EVALUATE_EVENTS)), before)
        self.assertNotIn(EVALUATE_EVENTS, os.listdir(out))


if __name__ == "__main__":
    sys.exit(unittest.main())
