"""Unit tests of the Python package (python/legalnet), with Debian's python3 (numpy, h5py, torch).
The cross-checks against the C++ networks and encodings are in check_against_cpp.py, driven by
tests/nn/nn_test.cpp. LEGALNET_BIN_DIR names the tools (gen_moves, tensorize) for a tiny dataset."""
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "python")
sys.path.insert(0, PACKAGE)
import legalnet  # noqa: E402

BIN = os.environ.get("LEGALNET_BIN_DIR", os.path.join(HERE, "..", "..", "build", "bin"))


def tiny_dataset(folder, games=8, seed=5):
    pgn, h5 = os.path.join(folder, "g.pgn"), os.path.join(folder, "d.h5")
    subprocess.run([os.path.join(BIN, "gen_moves"), "--games", str(games), "--seed", str(seed), "--out", pgn,
                    "--quiet"], check=True)
    subprocess.run([os.path.join(BIN, "tensorize"), "--in", pgn, "--out", h5, "--quiet"], check=True)
    return h5


class Moves(unittest.TestCase):
    def test_index_convention(self):
        self.assertEqual(legalnet.move_index("e2e4"), 12 * 64 + 28)
        self.assertEqual(legalnet.move_index("e1g1"), 262)
        self.assertEqual(legalnet.move_index("e7e8n"), legalnet.move_index("e7e8q"))
        self.assertEqual(int(legalnet.GEOMETRIC.sum()), 1792)

    def test_decode_move_names_promotions_and_castling(self):
        self.assertEqual(legalnet.decode_move(12 * 64 + 28, "startpos"), "e2e4")
        self.assertEqual(legalnet.decode_move(legalnet.move_index("a7a8"), "8/P6k/8/8/8/8/8/K7 w - - 0 1"), "a7a8q")
        self.assertEqual(legalnet.decode_move(262, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"), "e1g1")
        with self.assertRaises(ValueError):
            legalnet.decode_move(4096, "startpos")

    def test_board_order_flips_black_rows_only(self):
        values = np.arange(2 * 4096, dtype=np.float32).reshape(2, 4096)
        board = legalnet.to_board_order(values, [1, -1], mover_frame=True)
        self.assertTrue((board[0] == values[0]).all())
        e7e5, e2e4 = legalnet.move_index("e7e5"), legalnet.move_index("e2e4")
        self.assertEqual(board[1, e7e5], values[1, e2e4])
        back = legalnet.to_board_order(torch.from_numpy(board), [1, -1], mover_frame=True)
        self.assertTrue(torch.equal(back, torch.from_numpy(values)))


class Imports(unittest.TestCase):
    def test_the_modules_import_each_other_one_way(self):
        # Module-level "from .x import" only, and no cycle: squares is the leaf that moves, fen
        # and attacks share (a cycle forced imports into function bodies).
        import ast
        folder = os.path.join(PACKAGE, "legalnet")
        graph = {}
        for name in os.listdir(folder):
            if not name.endswith(".py") or name in ("__init__.py", "__main__.py"):
                continue
            tree = ast.parse(open(os.path.join(folder, name)).read())
            graph[name[:-3]] = {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1}
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    local = [n for n in ast.walk(node) if isinstance(n, ast.ImportFrom) and n.level == 1]
                    self.assertEqual(local, [], f"{name}: {node.name} imports legalnet modules in its body")
        self.assertEqual(graph["squares"], set())

        def visit(module, path):
            for dep in graph.get(module, ()):
                self.assertNotIn(dep, path, f"import cycle: {' -> '.join(path + [dep])}")
                visit(dep, path + [dep])
        for module in graph:
            visit(module, [module])


class Fen(unittest.TestCase):
    def test_bad_fields_are_named(self):
        for fen, field in (("8/8/8 w - - 0 1", "field 1"), ("8/8/8/8/8/8/8/8 x - - 0 1", "field 2"),
                           ("8/8/8/8/8/8/8/8 w X - 0 1", "field 3"), ("8/8/8/8/8/8/8/7Z w - - 0 1", "field 1")):
            with self.assertRaisesRegex(ValueError, field):
                legalnet.parse_fen(fen)

    def test_en_passant_kept_only_when_a_capture_is_legal(self):
        legal = legalnet.parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2")
        self.assertEqual(legal.en_passant, 43)
        no_pawn = legalnet.parse_fen("4k3/8/8/3p4/8/8/8/4K3 w - d6 0 2")
        self.assertEqual(no_pawn.en_passant, -1)
        # The capture would expose the white king on the fifth rank to the rook.
        pinned = legalnet.parse_fen("8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 2")
        self.assertEqual(pinned.en_passant, -1)

    def test_state_inputs_are_the_same_for_a_colour_mirror(self):
        a = legalnet.encode_fen("r3k2r/ppp2ppp/8/q2pP3/8/8/PPPQ1PPP/R3K2R w KQq d6 0 9", "state")
        b = legalnet.encode_fen("r3k2r/pppq1ppp/8/8/Q2Pp3/8/PPP2PPP/R3K2R b Qkq d3 0 9", "state")
        self.assertTrue((a == b).all())
        self.assertEqual(a[16].sum(), 1)  # the en-passant square
        self.assertEqual([a[12 + k, 0, 0] for k in range(4)], [1, 1, 0, 1])


class Data(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.path = tiny_dataset(cls.folder.name)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_the_column_tables_are_the_cpp_ones(self):
        # tensorize creates every dataset from lib/data/dataset_format.h's tables, in their order.
        from legalnet.dataset import GAME_COLUMNS, ROW_COLUMNS
        with h5py.File(self.path) as f:
            def table(group):
                names = []
                group.visit(names.append)
                return {name: (group[name].dtype.name, group[name].shape[1:]) for name in names
                        if isinstance(group[name], h5py.Dataset)}
            self.assertEqual(table(f["games"]), GAME_COLUMNS)
            rows = {k: v for k, v in table(f).items() if "/" not in k}
            self.assertEqual(rows, ROW_COLUMNS)

    def test_dataset_items_and_rows(self):
        data = legalnet.Dataset(self.path, inputs="state", rows=[3, 1])
        self.assertEqual(len(data), 2)
        x, y = data[0]
        self.assertEqual(tuple(x.shape), (18, 8, 8))
        self.assertEqual(tuple(y.shape), (4096,))
        self.assertGreater(int(y.sum()), 0)
        with self.assertRaises(IndexError):
            legalnet.Dataset(self.path, rows=[10 ** 9])
        with self.assertRaisesRegex(ValueError, "unknown inputs"):
            legalnet.Dataset(self.path, inputs="pictures")

    def test_batch_reader_passes_every_row_once_and_repeats_its_order(self):
        whole = legalnet.Dataset(self.path, inputs="planes")
        reader = legalnet.BatchReader(self.path, inputs="planes", batch_size=7, seed=3, block_rows=64,
                                      buffer_blocks=2, drop_last=False)
        seen = torch.cat([x for x, _ in reader])
        self.assertEqual(len(seen), len(whole))
        key = lambda t: sorted(bytes(row.numpy().tobytes()) for row in t)
        self.assertEqual(key(seen), key(torch.stack([whole[i][0] for i in range(len(whole))])))
        again = legalnet.BatchReader(self.path, inputs="planes", batch_size=7, seed=3, block_rows=64,
                                     buffer_blocks=2, drop_last=False)
        self.assertTrue(torch.equal(torch.cat([x for x, _ in again]), seen))
        self.assertFalse(torch.equal(torch.cat([x for x, _ in reader]), seen))  # the next epoch differs

    def test_batch_reader_ply_limit_is_train_s_and_the_old_max_ply_still_works(self):
        def batches(**kw):
            reader = legalnet.BatchReader(self.path, inputs="planes", batch_size=5, seed=1, block_rows=64,
                                          drop_last=False, prefetch=0, **kw)
            return torch.cat([x for x, _ in reader])
        limited, everything = batches(position_ply_limit=10), batches()
        self.assertLess(len(limited), len(everything))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = batches(max_ply=9)  # ply <= 9 is ply < 10
        self.assertEqual([str(w.message) for w in caught],
                         ["BatchReader: max_ply is deprecated, use position_ply_limit (max_ply + 1)"])
        self.assertTrue(torch.equal(old, limited))
        self.assertTrue(torch.equal(batches(max_ply=-1), everything))

    def test_dataset_batches_in_any_order_and_in_workers_are_its_items(self):
        data = legalnet.Dataset(self.path, inputs="state")
        items = [data[i] for i in range(len(data))]
        x_all, y_all = torch.stack([x for x, _ in items]), torch.stack([y for _, y in items])
        order = np.random.default_rng(1).permutation(len(data))
        x, y = data.batch(order)
        self.assertTrue(torch.equal(x, x_all[order]) and torch.equal(y, y_all[order]))
        # A cache of 4 chunks, emptied and refilled within the batch: the same rows.
        small = legalnet.Dataset(self.path, inputs="state", cache_bytes=1)
        self.assertTrue(torch.equal(small.batch(order)[1], y_all[order]))
        # Spawned workers open the file themselves; the default collate takes whole batches.
        loader = torch.utils.data.DataLoader(data, batch_size=64, sampler=order.tolist(), num_workers=2,
                                             multiprocessing_context="spawn")
        batches = list(loader)
        self.assertEqual(len(batches[0][0]), 64)
        self.assertTrue(torch.equal(torch.cat([b[0] for b in batches]), x_all[order]))
        self.assertTrue(torch.equal(torch.cat([b[1] for b in batches]), y_all[order]))
        # Items taken one by one and put together by hand are still (x, y) pairs.
        pairs = data.__getitems__([3, 1])
        self.assertTrue(torch.equal(torch.utils.data.default_collate(pairs[::-1])[0], x_all[[1, 3]]))

    def test_a_worker_hands_over_compact_rows_that_become_the_batch(self):
        import pickle
        from unittest import mock
        data = legalnet.Dataset(self.path, inputs="state")
        order = np.random.default_rng(2).permutation(len(data))[:64].tolist()
        x, y = data.batch(order)
        # What the default collate makes of a batch in a DataLoader worker: [x, y] to code there,
        # and, pickled to the main process, the compact rows (not 64 x 16 KB of float targets),
        # which become the batch's tensors as they are unpickled.
        with mock.patch("torch.utils.data.get_worker_info", return_value=object()):
            made = torch.utils.data.default_collate(data.__getitems__(order))
        x_worker, y_worker = made
        self.assertTrue(torch.equal(x_worker, x) and torch.equal(y_worker, y))
        sent = pickle.dumps(made)
        self.assertLess(len(sent), 64 * 200)
        got = pickle.loads(sent)
        self.assertIsInstance(got, list)
        self.assertTrue(torch.equal(got[0], x) and torch.equal(got[1], y))
        self.assertEqual((got[0].dtype, got[1].dtype), (torch.float32, torch.float32))

    def test_a_chunk_that_does_not_inflate_to_its_size_is_refused(self):
        import shutil
        import zlib
        for name, data in (("long", zlib.compress(bytes(2 * 256 * 4096))), ("short", zlib.compress(bytes(100))),
                           ("cut", zlib.compress(bytes(256 * 4096))[:50]), ("junk", b"junk"),
                           ("checksum", zlib.compress(bytes(256 * 4096))[:-4] + bytes(4))):
            path = os.path.join(self.folder.name, name + ".h5")
            shutil.copy(self.path, path)
            with h5py.File(path, "r+") as f:
                f["legal_moves"].id.write_direct_chunk((256, 0), data)
            data = legalnet.Dataset(path)
            self.assertTrue(torch.equal(data[0][1], legalnet.Dataset(self.path)[0][1]))  # chunk 0 is intact
            with self.assertRaisesRegex(ValueError, f"^{path}: the chunk at row 256 of 'legal_moves' does not inflate"):
                data[300]

    def test_block_shuffle_sampler_visits_every_item_once_in_blocks(self):
        data = legalnet.Dataset(self.path)
        for workers in (1, 2):
            sampler = legalnet.BlockShuffleSampler(data, block_rows=100, buffer_blocks=2, seed=4, workers=workers,
                                                   batch_size=16)
            first, second = list(sampler), list(sampler)
            self.assertEqual(sorted(first), list(range(len(data))))
            self.assertNotEqual(first, second)
            sampler.set_epoch(0)
            self.assertEqual(list(sampler), first)
            # The first buffer holds two blocks: its items come from those 200 rows.
            self.assertLessEqual(len({i // 100 for i in first[:16]}), 2 * workers)
        sampler = legalnet.BlockShuffleSampler(data, block_rows=100, buffer_blocks=1, seed=4, workers=2, batch_size=16)
        batches = [list(sampler)[k:k + 16] for k in range(0, 64, 16)]
        for k, batch in enumerate(batches):  # worker k mod 2 reads the blocks b with b mod 2 == k mod 2
            self.assertEqual({i // 100 % 2 for i in batch}, {k % 2})

    def test_batch_reader_order_does_not_depend_on_its_threads(self):
        def epoch(**kw):
            reader = legalnet.BatchReader(self.path, inputs="state", batch_size=50, seed=7, block_rows=300,
                                          buffer_blocks=2, **kw)
            return [torch.cat(t) for t in zip(*reader)]
        quiet = epoch(prefetch=0, threads=1)
        busy = epoch(prefetch=3, threads=2)
        self.assertTrue(torch.equal(quiet[0], busy[0]) and torch.equal(quiet[1], busy[1]))
        # A consumer that stops early stops the background thread.
        reader = legalnet.BatchReader(self.path, inputs="state", batch_size=10, prefetch=1)
        for _ in zip(range(2), reader):
            pass
        for _ in range(50):
            if not any(t.name == "legalnet-batches" for t in threading.enumerate()):
                break
            time.sleep(0.1)
        self.assertFalse(any(t.name == "legalnet-batches" for t in threading.enumerate()))

    def test_a_model_scores_a_fen_and_exports(self):
        config = {"kind": "attention", "hidden": 16, "blocks": 1, "channels": 8, "heads": 2,
                  "squeeze_excitation": False, "geometric_head": True, "inputs": "state"}
        model = legalnet.LegalNet(config).eval()
        scores = legalnet.score_fen(model, "startpos", top=5)
        self.assertEqual(len(scores), 5)
        self.assertTrue(all(a[1] >= b[1] for a, b in zip(scores, scores[1:])))
        scripted = torch.jit.script(model)
        x = torch.from_numpy(legalnet.encode_fen("startpos", "state"))[None]
        self.assertTrue(torch.allclose(scripted(x), model(x)))


class Scores(unittest.TestCase):
    class Fixed(torch.nn.Module):
        """A "model" whose logits are given: planes inputs (the board's frame)."""
        inputs = "planes"

        def __init__(self, logits):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))
            self.logits = torch.as_tensor(logits, dtype=torch.float32)

        def forward(self, x):
            return self.logits.expand(len(x), -1)

    def test_large_logits_give_no_warning_and_ties_go_by_the_move(self):
        logits = np.full(4096, -1000.0)  # 1 / (1 + exp(1000)) overflowed
        for move, value in (("g1f3", 50.0), ("e2e4", 50.0), ("b1c3", 40.0), ("d2d4", 1000.0)):
            logits[legalnet.move_index(move)] = value
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scores = legalnet.score_fen(self.Fixed(logits), "startpos")
        # All four saturate to 1.0: the logits order them, and the tie at 50 goes by the UCI move.
        self.assertEqual([m for m, _ in scores[:4]], ["d2d4", "e2e4", "g1f3", "b1c3"])
        self.assertEqual([p for _, p in scores[:4]], [1.0] * 4)
        rest = [m for m, _ in scores[4:]]
        self.assertEqual(rest, sorted(rest))
        self.assertEqual({p for _, p in scores[4:]}, {0.0})
        self.assertEqual(len(scores), int(legalnet.GEOMETRIC.sum()))
        self.assertEqual(legalnet.score_fen(self.Fixed(logits), "startpos", top=2), [("d2d4", 1.0), ("e2e4", 1.0)])

    def test_probabilities_are_the_sigmoid(self):
        logits = np.linspace(-30, 30, 4096)
        scores = dict(legalnet.score_fen(self.Fixed(logits), "startpos"))
        for move in ("a2a3", "e2e4", "h1h8"):
            expected = float(torch.sigmoid(torch.tensor(logits[legalnet.move_index(move)], dtype=torch.float32)))
            self.assertAlmostEqual(scores[move], expected, places=6)


class SaveModel(unittest.TestCase):
    CONFIG = {"kind": "mlp", "hidden": 8, "blocks": 0, "channels": 0, "squeeze_excitation": False,
              "geometric_head": True, "input_kind": "planes"}

    def test_a_missing_folder_is_made_and_a_folder_is_refused(self):
        model = legalnet.LegalNet(self.CONFIG).eval()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "runs", "python", "model.safetensors")
            legalnet.save_model(model, path)
            loaded = legalnet.load_model(path)
            self.assertEqual((loaded.config["kind"], loaded.config["hidden"]), ("mlp", 8))
            self.assertEqual(os.listdir(os.path.dirname(path)), ["model.safetensors"])
            with self.assertRaisesRegex(ValueError, "is a folder"):
                legalnet.save_model(model, os.path.dirname(path))


class Install(unittest.TestCase):
    def test_the_wheel_declares_its_dependencies_license_and_command(self):
        import email.parser
        import zipfile
        with tempfile.TemporaryDirectory() as out:
            # The in-tree backend as pip calls it (PEP 517), in a process of its own.
            build = subprocess.run([sys.executable, "-I", "-B", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                                    "import build_backend; print(build_backend.build_wheel(sys.argv[2]))", PACKAGE, out],
                                   capture_output=True, text=True, cwd=out)
            self.assertEqual(build.returncode, 0, build.stderr)
            with zipfile.ZipFile(os.path.join(out, build.stdout.strip())) as wheel:
                names = wheel.namelist()
                info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
                metadata = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
                entry_points = wheel.read(f"{info}/entry_points.txt").decode()
                license_text = wheel.read(f"{info}/licenses/LICENSE").decode()
        self.assertEqual(info, f"legalnet-{legalnet.__version__}.dist-info")
        self.assertEqual(metadata["Version"], legalnet.__version__)
        requires = metadata.get_all("Requires-Dist")
        for name in ("numpy", "h5py", "torch", "safetensors"):
            self.assertTrue(any(r.split(";")[0].strip().startswith(name) and ";" not in r for r in requires),
                            (name, requires))
        self.assertEqual(sorted(metadata.get_all("Provides-Extra")), ["onnx", "tensorboard"])
        self.assertIn('onnxruntime; extra == "onnx"', requires)
        self.assertEqual(metadata["License-Expression"], "MIT")
        self.assertEqual(metadata.get_all("License-File"), ["LICENSE"])
        self.assertTrue(license_text.startswith("MIT License"), license_text[:100])
        self.assertIn("[console_scripts]\nlegalnet = legalnet.__main__:main\n", entry_points)
        self.assertIn("legalnet/__main__.py", names)

    def test_the_command_s_help_is_its_usage(self):
        import contextlib
        import io
        from legalnet.__main__ import main
        for argv in (["--help"], ["-h"]):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(main(argv), 0)
            self.assertTrue(out.getvalue().startswith("legalnet export MODEL.safetensors"), out.getvalue())

    def test_pip_installs_the_package_without_a_network(self):
        with tempfile.TemporaryDirectory() as target:
            run = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                                  "--target", target, PACKAGE], capture_output=True, text=True)
            if run.returncode != 0 and "No module named pip" in run.stderr:
                self.skipTest("this python has no pip")
            self.assertEqual(run.returncode, 0, run.stderr)
            check = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {target!r}); "
                                    "import legalnet; print(legalnet.__file__)"], capture_output=True, text=True,
                                   cwd=target)
            self.assertEqual(check.returncode, 0, check.stderr)
            self.assertTrue(check.stdout.startswith(target), check.stdout)


class PythonEnv(unittest.TestCase):
    """scripts/python-env (issue 60): the same folder without HOME (cron, systemd, env -i) as
    with it, and one line when no home can be found."""
    SCRIPT = os.path.join(HERE, "..", "..", "scripts", "python-env")

    def run_script(self, env, fake=None):
        env = {k: v for k, v in env.items() if k not in ("LEGALNET_VENV", "XDG_DATA_HOME")}
        if fake is not None:  # commands of these names (and exit statuses) come first on PATH
            env["PATH"] = fake + ":/usr/bin:/bin"
        return subprocess.run(["bash", self.SCRIPT], capture_output=True, text=True, env=env)

    def fake_commands(self, folder, uid):
        for name, body in (("id", f"echo {uid}"), ("getent", "exit 2")):
            with open(os.path.join(folder, name), "w") as f:
                f.write(f"#!/bin/sh\n{body}\n")
            os.chmod(os.path.join(folder, name), 0o755)
        return folder

    def test_without_home_it_names_the_same_folder(self):
        import pwd
        home = pwd.getpwuid(os.getuid()).pw_dir
        with_home = self.run_script(dict(os.environ, HOME=home))
        self.assertEqual((with_home.returncode, with_home.stderr), (0, ""))
        self.assertTrue(with_home.stdout.startswith(home + "/.local/share/legalnet/venv-torch"), with_home.stdout)
        env = dict(os.environ)
        env.pop("HOME", None)
        without = self.run_script(env)
        self.assertEqual((without.returncode, without.stdout, without.stderr), (0, with_home.stdout, ""))
        with tempfile.TemporaryDirectory() as fake:
            # No passwd entry: root's home is /root; anyone else is told what to set.
            root = self.run_script(env, self.fake_commands(fake, 0))
            self.assertEqual((root.returncode, root.stderr), (0, ""))
            self.assertTrue(root.stdout.startswith("/root/.local/share/legalnet/venv-torch"), root.stdout)
            nobody = self.run_script(env, self.fake_commands(fake, 4242))
            self.assertEqual((nobody.returncode, nobody.stdout, nobody.stderr),
                             (1, "", "python-env: HOME is not set; set it or LEGALNET_VENV\n"))
        # LEGALNET_VENV still names the whole path, HOME or not.
        direct = subprocess.run(["bash", self.SCRIPT], capture_output=True, text=True,
                                env=dict(env, LEGALNET_VENV="/somewhere/venv"))
        self.assertEqual((direct.returncode, direct.stdout), (0, "/somewhere/venv\n"))


if __name__ == "__main__":
    unittest.main()
