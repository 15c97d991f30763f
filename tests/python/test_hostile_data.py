"""Datasets from others read by the Python package as the C++ readers read them: values stored
outside the file (external raw storage, virtual datasets other than ``tensorize merge``'s) are
refused with a ValueError naming the file and dataset, before any value is read."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import legalnet  # noqa: E402
from test_package import BIN, tiny_dataset  # noqa: E402


class StorageOutsideTheFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.data = tiny_dataset(cls.tmp)
        with h5py.File(cls.data, "r") as f:
            cls.rows = f["castling"].shape[0]
        with open(os.path.join(cls.tmp, "secret.txt"), "wb") as out:
            out.write(b"root:x:0:0:root:/root:/bin/bash\n" * 100)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def forge(self, name, column, **create):
        path = os.path.join(self.tmp, name)
        shutil.copy(self.data, path)
        with h5py.File(path, "r+") as f:
            dtype, shape = f[column].dtype, f[column].shape
            del f[column]
            if "layout" in create:
                f.create_virtual_dataset(column, create["layout"](shape, dtype))
            else:
                f.create_dataset(column, shape=shape, dtype=dtype, **create)
        return path

    def refused(self, path, message):
        for open_it in (lambda: legalnet.Dataset(path), lambda: next(iter(legalnet.BatchReader(path, batch_size=4)))):
            with self.assertRaises(ValueError) as caught:
                open_it()
            self.assertEqual(str(caught.exception), f"{path}: {message}")

    def virtual(self, file_name, source_name="castling"):
        def layout(shape, dtype):
            result = h5py.VirtualLayout(shape=shape, dtype=dtype)
            result[...] = h5py.VirtualSource(file_name, source_name, shape=shape)
            return result
        return layout

    def test_external_storage_is_refused(self):
        path = self.forge("ext.h5", "castling", external=[("secret.txt", 0, h5py.h5f.UNLIMITED)])
        self.refused(path, "dataset 'castling' keeps its values in an external file; only data inside the file is read")
        fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(fifo)
        path = self.forge("ext-fifo.h5", "games/plies", external=[("fifo", 0, h5py.h5f.UNLIMITED)])
        self.refused(path, "dataset 'games/plies' keeps its values in an external file; "
                           "only data inside the file is read")

    def test_columns_through_links_are_refused(self):
        # A soft link reads another name, an external link another file (a FIFO: for ever).
        cases = [("link-external.h5", h5py.ExternalLink("d.h5", "/castling"), "an external link (into another file)"),
                 ("link-soft.h5", h5py.SoftLink("/en_passant"), "a soft link (to another name)")]
        for name, link, kind in cases:
            with self.subTest(name):
                path = os.path.join(self.tmp, name)
                shutil.copy(self.data, path)
                with h5py.File(path, "r+") as f:
                    del f["castling"]
                    f["castling"] = link
                self.refused(path, f"dataset 'castling' is {kind}; only the file's own datasets are read")

    def test_foreign_virtual_sources_are_refused(self):
        os.symlink("vds-self.h5", os.path.join(self.tmp, "alias.h5"))
        cases = [("vds-self.h5", "alias.h5", "castling", "which is this file itself"),
                 ("vds-dir.h5", ".", "castling", "which is missing or not a regular file"),
                 ("vds-passwd.h5", "/etc/passwd", "castling",
                  "which is not beside it (merge joins only shards in the file's own folder)"),
                 ("vds-parent.h5", "../d.h5", "castling",
                  "which is not beside it (merge joins only shards in the file's own folder)"),
                 ("vds-sub.h5", "sub/d.h5", "castling",
                  "which is not beside it (merge joins only shards in the file's own folder)"),
                 ("vds-foreign.h5", "secret.txt", "castling", "which is not a legalnet dataset"),
                 ("vds-rename.h5", "d.h5", "en_passant", "not as tensorize merge joins shards"),
                 ("vds-nested.h5", "ext.h5", "castling", "whose 'castling' is not stored in that file itself")]
        self.forge("ext.h5", "castling", external=[("secret.txt", 0, h5py.h5f.UNLIMITED)])
        for name, source, column, why in cases:
            with self.subTest(name):
                path = self.forge(name, "castling", layout=self.virtual(source, column))
                self.refused(path, f"dataset 'castling' is joined from '{source}', {why}")

    def test_sizes_claimed_beyond_what_is_stored_are_refused(self):
        path = self.forge("unwritten.h5", "castling")  # never written: HDF5 would read zeros
        self.refused(path, f"dataset 'castling' claims {self.rows} bytes of values but stores 0 bytes")
        path = os.path.join(self.tmp, "huge.h5")
        shutil.copy(self.data, path)
        with h5py.File(path, "r+") as f:
            del f["legal_moves"]
            f.create_dataset("legal_moves", shape=(2**40, 4096), dtype=np.uint8, chunks=(256, 4096),
                             compression="gzip")
        self.refused(path, f"dataset 'legal_moves' claims {2**40 * 4096} bytes of values but stores 0 bytes")
        path = self.forge("scaleoffset.h5", "castling", chunks=True, scaleoffset=0)
        self.refused(path, "dataset 'castling' is stored through HDF5 filter 6, which this reader does not take "
                           "(gzip and shuffle only)")

    def test_a_fifo_is_refused_before_it_is_opened(self):
        fifo = os.path.join(self.tmp, "pipe.h5")
        os.mkfifo(fifo)
        self.refused(fifo, "not a regular file (a dataset is read from a file on disk)")

    def test_a_vds_prefix_is_refused_for_a_joined_file(self):
        # HDF5_VDS_PREFIX makes HDF5 read a joined file's shards from another folder than the one
        # they were checked in. HDF5 reads the variable when it starts: a child process.
        shard = os.path.join(self.tmp, "prefix-shard.h5")
        shutil.copy(self.data, shard)
        joined = os.path.join(self.tmp, "prefix-joined.h5")
        subprocess.run([os.path.join(BIN, "tensorize"), "merge", "--out", joined, self.data, shard], check=True,
                       capture_output=True)
        code = ("import sys, legalnet\n"
                "try:\n    legalnet.Dataset(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n")
        env = dict(os.environ, HDF5_VDS_PREFIX=self.tmp + "/elsewhere",
                   PYTHONPATH=os.path.join(HERE, "..", "..", "python"))
        for path, expected in ((joined, f"{joined}: dataset 'castling' is joined from shards, and HDF5_VDS_PREFIX "
                                          f"('{self.tmp}/elsewhere') would make HDF5 read them from elsewhere than "
                                          "beside the file; unset it"),
                               (self.data, "")):
            done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, env=env)
            self.assertEqual((done.returncode, done.stdout.strip()), (0, expected), done.stderr)

    def test_merges_own_virtual_datasets_are_read(self):
        shard = os.path.join(self.tmp, "shard.h5")
        shutil.copy(self.data, shard)
        joined = os.path.join(self.tmp, "joined.h5")
        subprocess.run([os.path.join(BIN, "tensorize"), "merge", "--out", joined, self.data, shard], check=True,
                       capture_output=True)
        self.assertEqual(len(legalnet.Dataset(joined)), 2 * self.rows)
        x, _ = legalnet.Dataset(joined)[self.rows]
        np.testing.assert_array_equal(x.numpy(), legalnet.Dataset(self.data)[0][0].numpy())


class ValuesTheCppSideRefuses(unittest.TestCase):
    """Positions and values lib/chess/position.cpp and lib/train/training_data.cpp refuse are
    refused here too, each with a ValueError naming the field (and for a dataset the file and
    row), never accepted and never another exception type."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.data = tiny_dataset(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_encode_fen_refuses_what_the_fen_parser_refuses(self):
        cases = [
            ("8/8/8/8/8/8/8/8 w - - 0 1", "FEN field 1: 0 white kings, expected exactly one"),
            ("k7/8/8/8/8/8/8/KK6 w - - 0 1", "FEN field 1: 2 white kings, expected exactly one"),
            ("kk6/8/8/8/8/8/8/K7 w - - 0 1", "FEN field 1: 2 black kings, expected exactly one"),
            ("k6P/8/8/8/8/8/8/K7 w - - 0 1", "FEN field 1: pawn on the first or last rank"),
            ("QQQQQQQQ/QQQQQQQQ/8/8/8/8/8/4K2k w - - 0 1",
             "FEN field 1: white has 15 promoted pieces and 0 pawns: more than its 8 pawns could become"),
            ("4k3/8/8/8/8/p7/pppppppp/4K3 b - - 0 1", "FEN field 1: 9 black pawns, more than 8"),
            ("k6R/8/8/8/8/8/8/K7 w - - 0 1", "FEN field 1: the side not to move is in check"),
            ("k7/8/8/8/8/8/8/K8 w - - 0 1", "FEN field 1: rank 1 is longer than 8 squares"),
            ("k7/8/8/8/8/8/8/K9 w - - 0 1", "FEN field 1: '9' is not a piece"),
            ("k7/8/8/8/8/8/8/K\u00b26 w - - 0 1", "FEN field 1: '\u00b2' is not a piece"),
            ("k7/8/8/8/8/8/8/K7 x - - 0 1", "FEN field 2: 'x', expected w or b"),
            ("k7/8/8/8/8/8/8/K7 w K - 0 1", "FEN field 3: castling right 'K' but the king or rook is not on its square"),
            ("r3k2r/8/8/8/8/8/8/R3K2R w KK - 0 1", "FEN field 3: castling letter 'K' repeated"),
            ("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1",
             "FEN field 3: castling letter 'H' is Chess960's (Shredder-FEN), not standard chess"),
            ("k7/8/8/8/8/8/8/K7 w - e9 0 1", "FEN field 4: en-passant square 'e9' is not a square"),
            ("k7/8/8/8/8/8/8/K7 w - e6 0 1", "FEN field 4: en-passant square e6 does not follow a double pawn push"),
            ("k7/8/8/8/8/8/8/K7 w - - x 1", "FEN field 5: halfmove clock 'x' is not a number"),
            ("k7/8/8/8/8/8/8/K7 w - - 0 -1", "FEN field 6: fullmove number '-1' is not a number"),
            ("k7/8/8/8/8/8/8/K7 w - - 0 1 9", "7 fields, expected 6 (or 4 without counters)"),
            (None, "FEN: NoneType None, not a string"),
            (b"startpos", "FEN: bytes b'startpos', not a string"),
        ]
        for fen, message in cases:
            with self.subTest(fen=fen):
                with self.assertRaises(ValueError) as caught:
                    legalnet.encode_fen(fen)
                self.assertIn(message, str(caught.exception))
        # What the C++ parser takes is still taken: an en-passant square kept only when legal.
        legalnet.encode_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
        legalnet.encode_fen("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1")

    def forge(self, name, change):
        path = os.path.join(self.tmp, name)
        shutil.copy(self.data, path)
        with h5py.File(path, "r+") as f:
            change(f)
        return path

    def refused(self, path, message):
        readers = [lambda: [legalnet.Dataset(path)[i] for i in range(len(legalnet.Dataset(path)))],
                   lambda: list(legalnet.BatchReader(path, batch_size=4))]
        for read in readers:
            with self.assertRaises(ValueError) as caught:
                read()
            self.assertEqual(str(caught.exception), f"{path}: {message}")

    def test_a_dataset_row_the_cpp_readers_refuse(self):
        def put(column, row, value, index=()):
            def change(f):
                values = f[column][row]
                if index:
                    values[index] = value
                else:
                    values = value
                f[column][row] = values
            return change

        def kings_gone(f):
            p = f["positions"][5]
            p[6] = 0
            f["positions"][5] = p

        def second_king(f):
            p = f["positions"][4]
            empty = np.flatnonzero(np.abs(p[1:]).sum(0).reshape(-1) == 0)
            # An empty square far from the black king, so that only the count is wrong.
            p[6].reshape(-1)[empty[0]] = 1
            f["positions"][4] = p

        self.refused(self.forge("castling200.h5", put("castling", 3, 200)), "row 3: castling is 200, not 0..15")
        self.refused(self.forge("ep100.h5", put("en_passant", 2, 100)), "row 2: en_passant is 100, not -1..63")
        self.refused(self.forge("ep-2.h5", put("en_passant", 6, -2)), "row 6: en_passant is -2, not -1..63")
        self.refused(self.forge("ep-bad.h5", put("en_passant", 0, 44)),
                     "row 0: not a position: FEN field 4: en-passant square e6 does not follow a double pawn push")
        self.refused(self.forge("value7.h5", put("positions", 1, 7, (2, 3, 4))),
                     "row 1: positions[2][3][4] is 7, not -1, 0 or +1")
        self.refused(self.forge("no-kings.h5", kings_gone),
                     "row 5: not a position: FEN field 1: 0 white kings, expected exactly one")
        self.refused(self.forge("two-kings.h5", second_king),
                     "row 4: not a position: FEN field 1: 2 white kings, expected exactly one")
        self.refused(self.forge("two-pieces.h5", put("positions", 0, 1, (3, 0, 0))),
                     "row 0: not a position: two pieces on square a1")
        # Row 0 is the start position: without the rook on a1, the right 'Q' is a lie.
        self.refused(self.forge("castling-rook.h5", put("positions", 0, 0, (4, 0, 0))),
                     "row 0: not a position: FEN field 3: castling right 'Q' but the king or rook is not on its square")

    def test_material_no_game_reaches_is_refused_as_the_cpp_readers_refuse_it(self):
        # Issue 60: lib/chess/position.cpp refuses more than 8 pawns a side and more promoted
        # pieces than missing pawns (fen.py's position_errors mirrors it); every row the readers
        # decode goes through that check. Planes: 0 side, 1 pawns .. 5 queens, 6 kings;
        # positions[plane][rank][file], +1 for white.
        def queens(f):  # row 3 with the start position's white pieces and 16 white queens
            p = f["positions"][0]
            p[1, 1, :] = 0  # the white pawns become queens
            p[5, 1, :] = 1
            p[5, 2, :7] = 1  # and seven more on a3..g3: the queen of d1 and 15 promoted
            f["positions"][3] = p
            f["castling"][3] = f["castling"][0]
            f["en_passant"][3] = -1

        def pawns(f):  # row 2 with a ninth black pawn on a6
            p = f["positions"][0]
            p[1, 5, 0] = -1
            f["positions"][2] = p
            f["castling"][2] = f["castling"][0]
            f["en_passant"][2] = -1

        train = os.path.join(BIN, "train")
        for name, change, message in (
                ("sixteen-queens.h5", queens, "row 3: not a position: FEN field 1: white has 15 promoted pieces and "
                                              "0 pawns: more than its 8 pawns could become"),
                ("nine-pawns.h5", pawns, "row 2: not a position: FEN field 1: 9 black pawns, more than 8")):
            path = self.forge(name, change)
            self.refused(path, message)
            if os.path.exists(train):  # the C++ reader's verdict, in the same words
                out = os.path.join(self.tmp, "run-" + name)
                run = subprocess.run([train, "--data", path, "--val", path, "--out", out, "--arch", "mlp", "--hidden", "8",
                                      "--max-steps", "1", "--device", "cpu"],
                                     capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"),
                                     timeout=300)
                self.assertEqual((run.returncode, run.stderr.splitlines()), (1, [f"train: {path}: {message}"]))
        # The same position as a FEN, refused with the same words.
        with self.assertRaisesRegex(ValueError, "^FEN field 1: white has 15 promoted pieces and 0 pawns"):
            legalnet.encode_fen("rnbqkbnr/pppppppp/8/8/8/QQQQQQQ1/QQQQQQQQ/RNBQKBNR w KQkq - 0 1")


if __name__ == "__main__":
    unittest.main()
