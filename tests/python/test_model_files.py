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
import zlib
from unittest import mock

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "python")
TESTDATA = os.path.join(HERE, "..", "testdata")
sys.path.insert(0, PACKAGE)
import legalnet  # noqa: E402
from legalnet.convert import read_old_model  # noqa: E402

BIN = os.environ.get("LEGALNET_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin"))
CRC_KEY = "legalnet_data_crc32"
CONFIG = {"kind": "resnet", "hidden": 0, "blocks": 1, "channels": 8, "heads": 0, "squeeze_excitation": False,
          "geometric_head": True, "inputs": "state"}


def split(data):
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def join(header, body):
    """A file of ``header`` and ``body``, its checksum (when the header has one) that of ``body``:
    the hostile files are forged by someone who knows the format, so that the checks behind the
    checksum are reached."""
    metadata = header.get("__metadata__")
    if isinstance(metadata, dict) and CRC_KEY in metadata:
        metadata[CRC_KEY] = tensors_crc(header, body)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def crc_text(body):
    return f"{zlib.crc32(body) & 0xFFFFFFFF:08x}"


def tensors_crc(header, body):
    """The tensors' CRC-32, each tensor's bytes in the order of the names (as legalnet computes
    it), or the whole body's where the header's offsets do not hold."""
    try:
        crc = 0
        for name in sorted(k for k in header if k != "__metadata__"):
            begin, end = header[name]["data_offsets"]
            crc = zlib.crc32(body[begin:end], crc)
        return f"{crc & 0xFFFFFFFF:08x}"
    except (TypeError, ValueError, KeyError, AttributeError):
        return crc_text(body)


def flipped(good, at):
    """``good`` with one bit of byte ``at`` of its data section flipped, the checksum left as it was."""
    header_bytes = struct.unpack("<Q", good[:8])[0]
    data = bytearray(good)
    data[8 + header_bytes + at] ^= 0x10
    return bytes(data)


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
        # Issue 35: nesting that recursive code would follow, numbers the net would trust.
        ("config nested 1000 deep", changed(good, lambda h, _: h["__metadata__"].__setitem__(
            "config", "[" * 1000 + "]" * 1000)), "nested deeper than 64"),
        ("training nested 100000 deep", changed(good, lambda h, _: h["__metadata__"].__setitem__(
            "training", '{"a":' * 100000 + "1" + "}" * 100000)), "nested deeper than 64"),
        ("header nested 100000 deep", join_text(good, ',"deep":' + "[" * 100000 + "]" * 100000), ""),
        ("a NaN weight", changed(good, lambda h, b: b.__setitem__(
            slice(h[first]["data_offsets"][0], h[first]["data_offsets"][0] + 4), struct.pack("<f", float("nan")))),
         "NaN or infinite"),
        ("an infinite weight", changed(good, lambda h, b: b.__setitem__(
            slice(h[first]["data_offsets"][1] - 4, h[first]["data_offsets"][1]), struct.pack("<f", float("-inf")))),
         "NaN or infinite"),
        ("fractional blocks", with_config(good, blocks=1.5), "blocks"),
        ("channels 2^32+8", with_config(good, channels=2**32 + 8), "channels"),
        ("boolean blocks", with_config(good, blocks=True), "blocks"),
        ("mixing the net does not have", with_config(good, mixing="lines\x1b[2J"), "mixing"),
        # Issue 60: a byte damaged in a copy, in a weight or in a move map.
        ("a flipped byte", flipped(good, 5), "the tensors do not match their checksum"),
        ("a flipped byte in the move map", flipped(good, split(good)[0]["head.source"]["data_offsets"][0]),
         "the tensors do not match their checksum"),
    ]


def join_text(good, extra):
    """``good`` with ``extra`` (JSON text) added at the end of its header's object."""
    header, body = split(good)
    text = json.dumps(header)[:-1] + extra + "}"
    return struct.pack("<Q", len(text)) + text.encode() + body


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
        self.assertEqual(header["__metadata__"][CRC_KEY], tensors_crc(header, body))
        self.assertEqual((len(self.good) - len(body)) % 8, 0)  # the data 8-byte aligned, as safetensors writes it
        from safetensors import safe_open
        with safe_open(self.good_path, framework="pt") as f:  # the reference reader takes it
            self.assertEqual(f.metadata()[CRC_KEY], tensors_crc(header, body))
            self.assertTrue(torch.equal(f.get_tensor("stem.weight"), model.net.state_dict()["stem.weight"]))

    def test_a_damaged_file_is_refused_by_its_checksum_and_one_without_a_checksum_loads(self):
        # Issue 60: a flipped byte in the tensors (one that leaves every value finite) is one line
        # naming the file and both checksums, in Python and in evaluate.
        stored = split(self.good)[0]["__metadata__"][CRC_KEY]
        damaged = flipped(self.good, 1)
        path = self.write("damaged", damaged)
        with self.assertRaises(ValueError) as raised:
            legalnet.load_model(path)
        self.assertEqual(str(raised.exception),
                         f"{path}: the tensors do not match their checksum ({CRC_KEY} {stored}, computed "
                         f"{tensors_crc(*split(damaged))}): the file is damaged; copy it again or retrain")
        evaluate = os.path.join(BIN, "evaluate")
        if os.path.exists(evaluate):
            run = subprocess.run([evaluate, "--model", path, "--fen", "startpos", "--device", "cpu"],
                                 capture_output=True, text=True)
            self.assertEqual((run.returncode, len(run.stderr.splitlines())), (1, 1), run.stderr)
            self.assertIn(f"the tensors do not match their checksum ({CRC_KEY} {stored}, computed", run.stderr)
        # A file from before the checksum (or from another writer) loads, and gives the same net.
        older_data = changed(self.good, lambda h, _: h["__metadata__"].pop(CRC_KEY))
        self.assertNotIn(CRC_KEY, split(older_data)[0]["__metadata__"])
        older = self.write("no-checksum", older_data)
        x = torch.randn(3, legalnet.input_kind("state").planes, 8, 8)
        with torch.no_grad():
            self.assertTrue(torch.equal(legalnet.load_model(older)(x), legalnet.load_model(self.good_path)(x)))
        if os.path.exists(evaluate):
            run = subprocess.run([evaluate, "--model", older, "--fen", "startpos", "--device", "cpu", "-q"],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
        # A checksum that is not 8 hex digits is a mismatch too, quoted escaped.
        header, body = split(self.good)
        header["__metadata__"][CRC_KEY] = "\x1b[2J"
        text = json.dumps(header).encode()
        odd = self.write("odd-checksum", struct.pack("<Q", len(text)) + text + body)
        with self.assertRaisesRegex(ValueError, r"\(legalnet_data_crc32 \\x1b\[2J, computed [0-9a-f]{8}\)"):
            legalnet.load_model(odd)

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

    def test_export_writes_its_own_temporary_whatever_is_planted_beside_it(self):
        # Issue 60: export closed its temporary and the ONNX writer reopened it by name, so a link
        # planted under that name made it write over the file the link named. Someone who can
        # write in the output's folder does here what they can: each temporary they see there is
        # moved away, a file replaced by a link to a victim file, a folder by a link to a folder
        # of theirs; the export still writes only its own file, and then the output.
        from legalnet import export as export_module
        folder = os.path.join(self.dir, "shared-out")
        victims = os.path.join(self.dir, "victims")
        os.makedirs(folder)
        os.makedirs(victims)
        out = os.path.join(folder, "planted.onnx")
        victim = os.path.join(victims, "planted.onnx")
        with open(victim, "wb") as f:
            f.write(b"victim")
        real, seen = export_module._write_onnx, []

        def planting(model, temp):
            for entry in sorted(n for n in os.listdir(folder) if ".tmp." in n and not n.endswith(".moved")):
                at = os.path.join(folder, entry)
                seen.append(entry)
                moved = os.path.isdir(at)
                os.rename(at, at + ".moved")
                os.symlink(victims if moved else victim, at)
            real(model, temp)

        with mock.patch.object(export_module, "_write_onnx", planting):
            self.assertEqual(legalnet.export_model(self.good_path, out), "ONNX")
        self.assertEqual(len(seen), 1)  # the temporary was there to be found
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"victim")
        self.assertEqual(os.listdir(victims), ["planted.onnx"])
        self.assertFalse(os.path.islink(out))
        import onnx
        self.assertEqual({p.key: p.value for p in onnx.load(out).metadata_props}["legalnet_inputs"], "state")

    def test_an_export_leaves_only_its_output_with_the_users_mode(self):
        folder = os.path.join(self.dir, "plain-out")
        os.makedirs(folder)
        for extension in (".onnx", ".pt2", ".ts"):
            out = os.path.join(folder, "model" + extension)
            old = os.umask(0o022)
            try:
                legalnet.export_model(self.good_path, out)
            finally:
                os.umask(old)
            self.assertEqual(os.stat(out).st_mode & 0o777, 0o644)
        self.assertEqual(sorted(os.listdir(folder)), ["model.onnx", "model.pt2", "model.ts"])
        self.assertEqual(torch.jit.load(os.path.join(folder, "model.ts")).inputs, "state")
        extra = {"legalnet_inputs": ""}
        torch.export.load(os.path.join(folder, "model.pt2"), extra_files=extra)
        self.assertEqual(extra["legalnet_inputs"], "state")


def old_archive(path, pickled, storages=()):
    """An earlier legalnet's model.pt as far as convert reads it: a zip holding ARCHIVE/data.pkl
    and ARCHIVE/data/N, stored."""
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickled)
        for key, data in storages:
            z.writestr(f"archive/data/{key}", data)


def _text(s):
    data = s.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def module_pickle(items):
    """Pickle opcodes of a __torch__ Module whose state holds ``items`` (opcode strings)."""
    body = b"".join(_text(k) + v for k, v in items)
    return b"c__torch__\nModule\n)\x81}(" + body + b"ub"


class HostileOldModels(unittest.TestCase):
    """convert reads an earlier legalnet's model.pt as data (issue 35, class 3): what the
    pickle names is bounded by what the file stores, and each module is visited once."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, path, part):
        run = subprocess.run([sys.executable, "-m", "legalnet", "convert", path, os.path.join(self.dir, "new.safetensors")],
                             capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=PACKAGE), timeout=120)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertIn(part, run.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "new.safetensors")))

    def test_a_stride_0_view_cannot_name_gigabytes(self):
        storage = b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ"
        view = (b"ctorch._utils\n_rebuild_tensor_v2\n(" + storage + b"K\x00J\x00\x00\x10\x00J\x00\x04\x00\x00\x86"
                b"K\x00K\x00\x86\x89ccollections\nOrderedDict\n)RtR")
        path = os.path.join(self.dir, "stride0.pt")
        old_archive(path, b"\x80\x02" + module_pickle([("weight", view)]) + b".", [("0", b"\x00" * 4)])
        self.refused(path, "a tensor of 1073741824 elements views a storage of 1")

    def test_a_module_tree_shared_2_40_ways_is_refused_at_once(self):
        # Each level refers to the one below twice through the pickle's memo: 2^40 paths.
        ops = module_pickle([]) + b"q\x00"
        for level in range(1, 41):
            ops += b"0" + module_pickle([("a", b"h" + bytes([level - 1])), ("b", b"h" + bytes([level - 1]))])
            ops += b"q" + bytes([level])
        path = os.path.join(self.dir, "shared.pt")
        old_archive(path, b"\x80\x02" + ops + b".")
        self.refused(path, "appears more than once")

    def test_a_config_nested_deep_is_refused(self):
        config = "[" * 5000 + "]" * 5000
        ops = module_pickle([("legalnet_format", _text("legalnet-model 1")), ("legalnet_config", _text(config))])
        path = os.path.join(self.dir, "deep-config.pt")
        old_archive(path, b"\x80\x02" + ops + b".")
        self.refused(path, "nested deeper than 64")


class SharedConfigRules(unittest.TestCase):
    """One verdict for one config (issue 35, class 9): tests/testdata/model_configs.json, each
    config in a model file read by load_model and by the C++ evaluate."""

    def test_python_and_cpp_agree_on_every_config(self):
        with open(os.path.join(TESTDATA, "model_configs.json")) as f:
            cases = json.load(f)["cases"]
        evaluate = os.path.join(BIN, "evaluate")
        with tempfile.TemporaryDirectory() as folder:
            good = legalnet.LegalNet(CONFIG).eval()
            for i, case in enumerate(cases):
                with self.subTest(case["name"]):
                    text = json.dumps(case["config"])
                    try:
                        net = legalnet.LegalNet(legalnet.model_file.resolve_config(case["config"]))
                    except ValueError:
                        net = good  # a refused config, stored beside another net's tensors
                    path = os.path.join(folder, f"config-{i}.safetensors")
                    legalnet.save_model(net, path)
                    with open(path, "rb") as f:
                        data = f.read()
                    with open(path, "wb") as f:
                        f.write(changed(data, lambda h, _: h["__metadata__"].__setitem__("config", text)))
                    try:
                        legalnet.load_model(path)
                        python = True
                    except ValueError:
                        python = False
                    self.assertEqual(python, case["accepted"], "Python")
                    if os.path.exists(evaluate):
                        run = subprocess.run([evaluate, "--model", path, "--fen", "startpos", "--device", "cpu", "-q"],
                                             capture_output=True, text=True)
                        self.assertIn(run.returncode, (0, 1), run.stderr)
                        self.assertEqual(run.returncode == 0, case["accepted"], ("C++", run.stderr))


class PackageCommandLine(unittest.TestCase):
    """python -m legalnet: file names escaped as the C++ tools escape them, outputs with the
    user's umask, one line and a status for every failure (issue 35, class 9)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.model = os.path.join(self.dir, "m.safetensors")
        legalnet.save_model(legalnet.LegalNet(CONFIG).eval(), self.model)

    def tearDown(self):
        self.tmp.cleanup()

    def legalnet(self, *args, **kw):
        return subprocess.run([sys.executable, "-m", "legalnet", *args], capture_output=True,
                              env=dict(os.environ, PYTHONPATH=PACKAGE), timeout=300, **kw)

    def test_file_names_reach_stderr_escaped(self):
        name = os.path.join(self.dir, "\x1b]0;owned\x07\x9b.safetensors")
        run = self.legalnet("score", name, "startpos")
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertNotIn(b"\x1b", run.stderr)
        self.assertNotIn(b"\x07", run.stderr)
        self.assertIn(b"\\x1b]0;owned\\x07", run.stderr)
        bad = os.path.join(os.fsencode(self.dir), b"\xff\xfe.pt")  # not UTF-8: a lone surrogate in Python
        run = self.legalnet("convert", bad, os.path.join(self.dir, "out.safetensors"))
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)
        self.assertIn(b"\\xff\\xfe.pt", run.stderr)

    def test_outputs_take_the_users_umask(self):
        for umask, mode in ((0o022, 0o644), (0o002, 0o664), (0o077, 0o600)):
            out = os.path.join(self.dir, f"copy-{umask:o}.safetensors")
            old = os.umask(umask)
            try:
                legalnet.save_model(legalnet.load_model(self.model), out)
            finally:
                os.umask(old)
            self.assertEqual(os.stat(out).st_mode & 0o777, mode, oct(umask))

    def test_sigint_is_one_line_and_status_130_with_no_temporary(self):
        import signal
        import time
        out = os.path.join(self.dir, "out.pt2")
        def loading_torch(pid):
            # Python's own handler is in place once the interpreter imports packages: a signal
            # before that (a slow start on a loaded machine) would find none, and end the process.
            try:
                with open(f"/proc/{pid}/maps") as maps:
                    return "torch" in maps.read()
            except OSError:
                return False

        for delay in (0.0, 3.0):  # while torch loads, and while it exports
            process = subprocess.Popen([sys.executable, "-m", "legalnet", "export", self.model, out],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=dict(os.environ, PYTHONPATH=PACKAGE))
            deadline = time.monotonic() + 120
            while not loading_torch(process.pid) and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
            if process.returncode == 0:
                continue  # done before the signal came: nothing to check
            # One line and status 130; or, where the signal lands while the interpreter cannot
            # yet raise KeyboardInterrupt (seen on a loaded machine), the process ends by the
            # signal itself, as a shell expects, saying nothing. Never a traceback, never a
            # temporary left behind.
            if process.returncode == -signal.SIGINT:
                self.assertEqual(err, b"")
            else:
                self.assertEqual(process.returncode, 130, err)
                self.assertEqual(err.decode().splitlines(), ["legalnet: interrupted"])
            self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])

    def test_sigint_while_numpy_loads_is_one_line_too(self):
        # numpy's C extension imports datetime through PyCapsule_Import, which turns a
        # KeyboardInterrupt raised there into an ImportError that no longer says so (a
        # traceback and status 1 in 4 of 20 such signals before legalnet/__init__.py noted the
        # signal itself). Signals from the moment numpy's extension is mapped, a little later
        # each time, to land inside that import.
        import signal
        import time
        for i in range(12):
            process = subprocess.Popen([sys.executable, "-m", "legalnet", "export", self.model,
                                        os.path.join(self.dir, "out.pt2")],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       env=dict(os.environ, PYTHONPATH=PACKAGE))
            deadline = time.monotonic() + 120
            def numpy_mapped():
                try:
                    with open(f"/proc/{process.pid}/maps") as maps:
                        return "_multiarray_umath" in maps.read()
                except OSError:
                    return False
            while not numpy_mapped() and process.poll() is None and time.monotonic() < deadline:
                pass
            time.sleep(0.0005 * i)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
            if process.returncode in (0, -signal.SIGINT):  # done before it, or ended by it (see above)
                continue
            self.assertEqual((process.returncode, err.decode().splitlines()), (130, ["legalnet: interrupted"]), i)
            self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])

    def test_an_unwritable_folder_is_one_line(self):
        for target in ("/proc/out.pt2", os.path.join(self.dir, "no-such-folder", "out.pt2")):
            run = self.legalnet("export", self.model, target)
            self.assertEqual(run.returncode, 1, run.stderr)
            self.assertEqual(len(run.stderr.splitlines()), 1, run.stderr)


if __name__ == "__main__":
    unittest.main()
