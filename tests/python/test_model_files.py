"""Model files are data (issue 27, classes 1 and 7): legalnet.load_model, `python -m legalnet
score|export|convert` and the C++ evaluate refuse hostile files with one line, no trace and no
signal, and leave every file as it was; an earlier legalnet's model.pt converts without running
anything from it; exports never write over their input. LEGALNET_BIN_DIR names the tools."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "python")
TESTDATA = os.path.join(HERE, "..", "testdata")
sys.path.insert(0, PACKAGE)
import legalnet  # noqa: E402
from legalnet.convert import read_old_model  # noqa: E402

BIN = os.environ.get("LEGALNET_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin"))
CONFIG = {"kind": "resnet", "hidden": 0, "blocks": 1, "channels": 8, "heads": 0, "squeeze_excitation": False,
          "geometric_head": True, "inputs": "state"}


def split(data):
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def join(header, body):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def changed(good, change):
    header, body = split(good)
    body = bytearray(body)
    change(header, body)
    return join(header, bytes(body))


def with_config(good, **sizes):
    def change(header, _):
        header["__metadata__"]["config"] = json.dumps(dict(CONFIG, **sizes))
    return changed(good, change)


def hostile_cases(good):
    """(name, bytes, a part of the one-line message) for each hostile file."""
    def offsets(name, value):
        return lambda h, _: h[name].__setitem__("data_offsets", value)
    first = "stem.weight"
    return [
        ("truncated", good[:len(good) // 2], ""),
        ("no header length", good[:5], ""),
        ("header length past EOF", struct.pack("<Q", 1 << 40) + b"{}", ""),
        ("header not JSON", struct.pack("<Q", 4) + b'{"a"', ""),
        ("overlapping offsets", changed(good, lambda h, _: h["stem_bn.bias"].__setitem__(
            "data_offsets", h["stem_bn.weight"]["data_offsets"])), ""),
        ("offsets past the data", changed(good, offsets(first, [0, 1 << 62])), ""),
        ("huge shape", changed(good, lambda h, _: h[first].__setitem__("shape", [1 << 20] * 3)), ""),
        ("wrong dtype", changed(good, lambda h, _: h[first].__setitem__("dtype", "F16")), ""),
        ("I64 buffer as F64", changed(good, lambda h, _: h["head.source"].__setitem__("dtype", "F64")), ""),
        ("256x4096 config", with_config(good, blocks=256, channels=4096), "too large"),
        ("10x1024 config in a small file", with_config(good, blocks=10, channels=1024), "the config asks for"),
        ("config with an escape", with_config(good, kind="\x1b]0;owned\x07"), "unknown model"),
        ("old format name", changed(good, lambda h, _: h["__metadata__"].__setitem__("format", "x")), "format"),
        ("no config", changed(good, lambda h, _: h["__metadata__"].pop("config")), "config"),
        ("move map changed", changed(good, lambda h, b: b.__setitem__(h["head.source"]["data_offsets"][0], 5)),
         "head.source"),
        ("a foreign tensor", changed(good, lambda h, _: h.__setitem__("evil", h.pop(first))), "tensor"),
        ("zip archive", b"PK\x03\x04" + good, "convert"),
    ]


class ModelFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.good_path = os.path.join(cls.dir, "good.safetensors")
        legalnet.save_model(legalnet.LegalNet(CONFIG).eval(), cls.good_path)
        with open(cls.good_path, "rb") as f:
            cls.good = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.dir, name.replace(" ", "-") + ".safetensors")
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_round_trip_and_the_header_is_plain_safetensors(self):
        model = legalnet.load_model(self.good_path)
        self.assertEqual(model.config["channels"], 8)
        header, body = split(self.good)
        self.assertEqual(header["__metadata__"]["format"], "legalnet-model 2")
        self.assertEqual(len(body), max(v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"))

    def test_hostile_files_are_refused_in_one_line_by_python_and_by_evaluate(self):
        evaluate = os.path.join(BIN, "evaluate")
        for name, data, part in hostile_cases(self.good):
            with self.subTest(name):
                path = self.write(name, data)
                with self.assertRaises(ValueError) as raised:
                    legalnet.load_model(path)
                message = str(raised.exception)
                self.assertTrue(message.startswith(path + ": "), message)
                self.assertIn(part, message)
                self.assertNotIn("\n", message)
                self.assertNotIn("\x1b", message)
                commands = [[evaluate, "--model", path, "--fen", "startpos", "--device", "cpu"]]
                if name in ("truncated", "256x4096 config", "zip archive"):  # each start costs seconds
                    commands.append([sys.executable, "-m", "legalnet", "score", path, "startpos"])
                for command in commands:
                    if not os.path.exists(command[0]):
                        continue
                    run = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PACKAGE))
                    self.assertEqual(run.returncode, 1, (command[0], run.stderr))  # not a signal, not a trace
                    lines = run.stderr.splitlines()
                    self.assertEqual(len(lines), 1, (command[0], run.stderr))
                    self.assertIn(path, lines[0])
                    self.assertNotIn("\x1b", run.stderr)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(), data)

    def test_a_fifo_is_refused_without_waiting(self):
        fifo = os.path.join(self.dir, "fifo.safetensors")
        os.mkfifo(fifo)
        with self.assertRaisesRegex(ValueError, "not a regular file"):
            legalnet.load_model(fifo)

    def test_an_old_model_converts_as_data_and_gives_the_cpp_logits(self):
        old = os.path.join(TESTDATA, "old-attention.pt")
        new = os.path.join(self.dir, "converted.safetensors")
        run = subprocess.run([sys.executable, "-m", "legalnet", "convert", old, new], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=PACKAGE))
        self.assertEqual(run.returncode, 0, run.stderr)
        model = legalnet.load_model(new)
        x = np.load(os.path.join(TESTDATA, "old-attention.inputs.npy"))
        expected = np.load(os.path.join(TESTDATA, "old-attention.logits.npy"))  # the old C++ build's logits
        with torch.no_grad():
            self.assertLess(float(np.abs(model(torch.from_numpy(x)).numpy() - expected).max()), 1e-5)

    def test_a_torchscript_file_with_code_runs_nothing(self):
        marker = os.path.join(self.dir, "written-by-the-file")

        class Module(torch.nn.Module):  # the name the C++ archives' modules have
            def __init__(self):
                super().__init__()
                self.weight = torch.zeros(2)
                self.target = marker

            def forward(self, x):
                return x

            @torch.jit.export
            def __getstate__(self):
                return (self.weight, self.training, self.target)

            @torch.jit.export
            def __setstate__(self, state: tuple[torch.Tensor, bool, str]):
                self.training = state[1]
                self.target = state[2]
                self.weight = torch.from_file(self.target, True, 16)  # creates or overwrites any file

        class Outer(torch.nn.Module):  # a model with one extra submodule
            def __init__(self):
                super().__init__()
                self.extra = Module()

            def forward(self, x):
                return self.extra(x)

        evil = os.path.join(self.dir, "evil.pt")
        torch.jit.script(Outer()).save(evil)
        if os.path.exists(marker):
            os.unlink(marker)
        with self.assertRaisesRegex(ValueError, "TorchScript archive.*python -m legalnet convert"):
            legalnet.load_model(evil)
        with self.assertRaises(ValueError):
            read_old_model(evil)
        evaluate = os.path.join(BIN, "evaluate")
        if os.path.exists(evaluate):
            run = subprocess.run([evaluate, "--model", evil, "--fen", "startpos"], capture_output=True, text=True)
            self.assertEqual((run.returncode, len(run.stderr.splitlines())), (1, 1), run.stderr)
            self.assertIn("TorchScript archive", run.stderr)
        self.assertFalse(os.path.exists(marker), "loading the file ran its __setstate__")
        # The file does what it says when torch.jit.load reads it: the reason it is refused.
        torch.jit.load(evil)
        self.assertTrue(os.path.exists(marker))

    def test_export_never_writes_over_its_input_and_leaves_no_temporary(self):
        model = os.path.join(self.dir, "export-me.onnx")  # a model file named like an export
        with open(self.good_path, "rb") as f, open(model, "wb") as out:
            out.write(f.read())
        before = sorted(os.listdir(self.dir))
        for out in (model, os.path.join(self.dir, "link.onnx")):
            if out.endswith("link.onnx"):
                os.symlink(model, out)
            run = subprocess.run([sys.executable, "-m", "legalnet", "export", model, out], capture_output=True,
                                 text=True, env=dict(os.environ, PYTHONPATH=PACKAGE))
            self.assertEqual(run.returncode, 1, run.stderr)
            self.assertIn("is the model being exported", run.stderr)
            self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        with open(model, "rb") as f:
            self.assertEqual(f.read(), self.good)
        with self.assertRaisesRegex(ValueError, "unknown export format '.txt'"):
            legalnet.export_model(self.good_path, os.path.join(self.dir, "x.txt"))
        # A failed export (a hostile model) leaves an earlier export as it was, and no temporary.
        earlier = os.path.join(self.dir, "earlier.pt2")
        with open(earlier, "wb") as f:
            f.write(b"earlier")
        with self.assertRaises(ValueError):
            legalnet.export_model(self.write("hostile-export", self.good[:100]), earlier)
        with open(earlier, "rb") as f:
            self.assertEqual(f.read(), b"earlier")
        leftovers = [n for n in os.listdir(self.dir) if ".tmp." in n]
        self.assertEqual(leftovers, [])
        self.assertTrue(set(before) <= set(os.listdir(self.dir)))


if __name__ == "__main__":
    unittest.main()
