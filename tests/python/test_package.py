"""Unit tests of the Python package (python/legalnet), with Debian's python3 (numpy, h5py, torch).
The cross-checks against the C++ networks and encodings are in check_against_cpp.py, driven by
tests/nn/nn_test.cpp. LEGALNET_BIN_DIR names the tools (gen_moves, tensorize) for a tiny dataset."""
import os
import subprocess
import sys
import tempfile
import unittest

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


class Install(unittest.TestCase):
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


if __name__ == "__main__":
    unittest.main()
