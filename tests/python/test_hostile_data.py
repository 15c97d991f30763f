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

    def test_foreign_virtual_sources_are_refused(self):
        os.symlink("vds-self.h5", os.path.join(self.tmp, "alias.h5"))
        cases = [("vds-self.h5", "alias.h5", "castling", "which is this file itself"),
                 ("vds-dir.h5", ".", "castling", "which is missing or not a regular file"),
                 ("vds-passwd.h5", "/etc/passwd", "castling", "which is not a legalnet dataset"),
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

    def test_merges_own_virtual_datasets_are_read(self):
        shard = os.path.join(self.tmp, "shard.h5")
        shutil.copy(self.data, shard)
        joined = os.path.join(self.tmp, "joined.h5")
        subprocess.run([os.path.join(BIN, "tensorize"), "merge", "--out", joined, self.data, shard], check=True,
                       capture_output=True)
        self.assertEqual(len(legalnet.Dataset(joined)), 2 * self.rows)
        x, _ = legalnet.Dataset(joined)[self.rows]
        np.testing.assert_array_equal(x.numpy(), legalnet.Dataset(self.data)[0][0].numpy())


if __name__ == "__main__":
    unittest.main()
