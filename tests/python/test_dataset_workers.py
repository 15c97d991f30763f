"""legalnet.Dataset in DataLoader workers (issue 33): the decoded chunks shared by the workers of
one Dataset, the same rows and tensors as without workers, and the ways back to a cache per
process (spawned workers, a file larger than the cache, moves that overflow the shared heap);
the batched fetch that makes a shuffled DataLoader fast (issue 61: whole chunks through the
cache, one fetch and one encoding per batch; the rates are bench/dataset_vs_h5py.py's).
LEGALNET_BIN_DIR names the tools (gen_moves, tensorize) for a tiny dataset."""
import functools
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import unittest
import zlib
from unittest import mock

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_package import tiny_dataset  # noqa: E402  (and legalnet on the path)

import legalnet  # noqa: E402
from legalnet import chunk_cache, rows  # noqa: E402

S = chunk_cache._SharedChunks
BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "dataset_vs_h5py.py")


def per_process(path, **kw):
    """A Dataset that keeps its cache per process, as before the shared one: the reference."""
    data = legalnet.Dataset(path, inputs="state", **kw)
    data._shared = None
    return data


def epoch(data, workers, sampler=None, context=None, seed=3):
    """One DataLoader epoch's batches (x, y), in the order the loader gives them: of the items
    `sampler` asks for (shuffle=True with a generator seeded with `seed` when None)."""
    generator = torch.Generator().manual_seed(seed)
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=sampler is None, sampler=sampler,
                                         generator=generator if sampler is None else None, num_workers=workers,
                                         multiprocessing_context=context)
    batches = list(loader)
    return torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches])


def claim_and_die(shared, c):
    """A worker that claims chunk c and dies before writing it."""
    with shared.states() as state:
        shared.lock(1 + c, wait=False)
        state[c] = S.CLAIMED
    os._exit(0)


def wait_for(signal_path, worker_id):
    """worker_init_fn: worker 1 starts (and opens the file) only once ``signal_path`` exists."""
    deadline = time.monotonic() + 120
    while worker_id == 1 and not os.path.exists(signal_path) and time.monotonic() < deadline:
        time.sleep(0.01)


def reversed_copy(path, out):
    """A dataset of the same shape as ``path``'s with its rows in the reverse order (each row
    still a valid one, with its own legal moves)."""
    shutil.copy(path, out)
    with h5py.File(out, "r+") as f:
        for name in ("positions", "legal_moves", "castling", "en_passant", "ply"):
            f[name][...] = f[name][...][::-1]
    return out


class TinyDatasetCase(unittest.TestCase):
    """A tiny dataset in a temporary folder, and its every row as one per-process batch (x, y)."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.path = tiny_dataset(cls.folder.name)
        ref = per_process(cls.path)
        cls.x, cls.y = ref.batch(np.arange(len(ref)))

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()


class SharedChunks(TinyDatasetCase):
    def order(self, items=None, seed=3):
        """A random order of the items (all of the file's by default)."""
        return np.random.default_rng(seed).permutation(len(self.x) if items is None else items).tolist()

    def test_workers_read_the_rows_the_sampler_asks_for_and_decode_each_chunk_once(self):
        order = self.order()
        for workers in (0, 2):
            data = legalnet.Dataset(self.path, inputs="state")
            self.assertIsNotNone(data._shared)
            x, y = epoch(data, workers, sampler=order)
            self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]), workers)
            self.assertTrue((data._shared.state == S.READY).all())
            self.assertEqual(int(data._shared.used[0]), int(self.y.sum()))  # every chunk's moves, once
            # The workers decoded the chunks for this process too: it reads them without decoding.
            with mock.patch.object(rows._Reader, "_read", side_effect=AssertionError("decoded again")):
                x, y = data.batch(order)
                self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]))
                self.assertTrue(torch.equal(epoch(data, 2, sampler=order)[1], self.y[order]))  # so do the next workers
        # shuffle=True: the same batches with and without workers, from the shared cache and from one
        # per process.
        self.assertTrue(torch.equal(epoch(legalnet.Dataset(self.path, inputs="state"), 2, seed=9)[1],
                                    epoch(per_process(self.path), 0, seed=9)[1]))

    def test_block_shuffle_sampler_with_workers_reads_its_rows(self):
        for workers in (0, 2):
            data = legalnet.Dataset(self.path, inputs="state")
            sampler = legalnet.BlockShuffleSampler(data, block_rows=256, buffer_blocks=2, seed=4,
                                                   workers=max(1, workers), batch_size=64)
            order = list(legalnet.BlockShuffleSampler(data, block_rows=256, buffer_blocks=2, seed=4,
                                                      workers=max(1, workers), batch_size=64))
            x, y = epoch(data, workers, sampler=sampler)
            self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]), workers)

    def test_spawned_workers_keep_a_cache_each(self):
        data = legalnet.Dataset(self.path, inputs="state", rows=np.arange(600))
        order = self.order(600)
        x, y = epoch(data, 2, sampler=order, context="spawn")
        self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]))
        self.assertFalse((data._shared.state == S.READY).any())  # nothing decoded into this process's memory

    def test_a_file_larger_than_the_cache_keeps_a_cache_per_process(self):
        data = legalnet.Dataset(self.path, inputs="state", cache_bytes=5 * 256 * chunk_cache.CACHED_ROW_BYTES)
        self.assertIsNone(data._shared)
        order = self.order()
        x, y = epoch(data, 2, sampler=order)
        self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]))

    def test_chunks_whose_moves_overflow_the_shared_heap_are_cached_per_process(self):
        data = legalnet.Dataset(self.path, inputs="state")
        chunks, r = data._shared.chunks, data._shared.chunk_rows
        fixed = len(data._shared.map) - 2 * len(data._shared.heap)
        data._shared = S(len(data), r, fixed + 2 * int(self.y.sum()) // 2)  # room for half of the moves
        order = self.order()
        x, y = epoch(data, 2, sampler=order)
        self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]))
        state = data._shared.state
        self.assertEqual(int((state == S.READY).sum() + (state == S.OVERFLOW).sum()), chunks)
        self.assertGreater(int((state == S.OVERFLOW).sum()), 0)
        self.assertGreater(int((state == S.READY).sum()), 0)
        x, y = data.batch(order)
        self.assertTrue(torch.equal(x, self.x[order]) and torch.equal(y, self.y[order]))

    def test_a_chunk_whose_claimant_died_is_decoded_by_the_next_process(self):
        data = legalnet.Dataset(self.path, inputs="state")
        worker = multiprocessing.get_context("fork").Process(target=claim_and_die, args=(data._shared, 1))
        worker.start()
        worker.join(60)
        self.assertEqual(worker.exitcode, 0)
        self.assertEqual(int(data._shared.state[1]), S.CLAIMED)
        x, y = data.batch(np.arange(len(data)))
        self.assertTrue(torch.equal(x, self.x) and torch.equal(y, self.y))
        self.assertTrue((data._shared.state == S.READY).all())

    def test_a_bad_chunk_is_refused_by_every_process_that_asks_for_it(self):
        path = os.path.join(self.folder.name, "bad.h5")
        shutil.copy(self.path, path)
        with h5py.File(path, "r+") as f:
            f["legal_moves"].id.write_direct_chunk((256, 0), zlib.compress(bytes(100)))
        data = legalnet.Dataset(path, inputs="state")
        self.assertTrue(torch.equal(data.batch([0, 1])[1], self.y[[0, 1]]))
        for _ in range(2):  # not left claimed, nor cached: refused again
            with self.assertRaisesRegex(ValueError, f"^{path}: the chunk at row 256 of 'legal_moves' does not inflate"):
                data.batch([0, 300])
            self.assertEqual(int(data._shared.state[1]), S.EMPTY)
        self.assertEqual(int(data._shared.state[0]), S.READY)
        loader = torch.utils.data.DataLoader(data, batch_size=64, num_workers=2)
        with self.assertRaisesRegex(ValueError, "the chunk at row 256 of 'legal_moves' does not inflate"):
            list(loader)


class ReplacedFile(unittest.TestCase):
    """Issue 60: a Dataset whose file is replaced while it is read (another dataset of the same
    shape moved onto its name) gave the rows of both files: the workers that opened the name
    afterwards read the new one, the shared cache held chunks of the old. Each process that
    opens the name now checks that it found the file the Dataset was made on."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.first = tiny_dataset(cls.folder.name)
        cls.second = reversed_copy(cls.first, os.path.join(cls.folder.name, "second.h5"))
        cls.x, cls.y = per_process(cls.first).batch(np.arange(len(legalnet.Dataset(cls.first))))
        cls.x2, cls.y2 = per_process(cls.second).batch(np.arange(len(cls.x)))
        assert not torch.equal(cls.x, cls.x2)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def message(self, path, owner="Dataset", what="a new inode or size"):
        return (f"{path}: the file changed since this {owner} was opened ({what}): it holds another dataset now; "
                f"make a new {owner}")

    def test_a_file_replaced_while_workers_read_it_is_refused_not_mixed(self):
        path = os.path.join(self.folder.name, "replaced.h5")
        shutil.copy(self.first, path)
        data = legalnet.Dataset(path, inputs="state")
        go = os.path.join(self.folder.name, "go")
        loader = torch.utils.data.DataLoader(data, batch_size=64, num_workers=2,
                                             worker_init_fn=functools.partial(wait_for, go))
        batches = iter(loader)
        x, y = next(batches)  # worker 0's, from the first file
        self.assertTrue(torch.equal(x, self.x[:64]) and torch.equal(y, self.y[:64]))
        os.replace(shutil.copy(self.second, path + ".new"), path)
        open(go, "w").close()  # worker 1 opens the name now, and finds the second file there
        with self.assertRaises(RuntimeError) as caught:
            for x, y in batches:
                pass
        self.assertIn(self.message(path), str(caught.exception))
        # The main process, opening its own handle, and the next workers refuse it too.
        with self.assertRaises(RuntimeError) as caught:
            data.batch([0])
        self.assertEqual(str(caught.exception), self.message(path))
        with self.assertRaisesRegex(RuntimeError, "the file changed since this Dataset was opened"):
            epoch(data, 2)
        # A new Dataset reads the new file.
        x, y = epoch(legalnet.Dataset(path, inputs="state"), 2, sampler=list(range(len(self.x))))
        self.assertTrue(torch.equal(x, self.x2) and torch.equal(y, self.y2))

    def test_a_file_rewritten_in_place_is_refused_at_the_next_chunk(self):
        path = os.path.join(self.folder.name, "rewritten.h5")
        shutil.copy(self.first, path)
        data = legalnet.Dataset(path, inputs="state")
        data._shared = None  # this process's own cache: chunk 1 is read from the file when asked for
        self.assertTrue(torch.equal(data.batch([0])[0], self.x[:1]))
        with open(path, "r+b") as f:  # a byte written over with itself: the same size and inode, a new time
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(last)
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new time, whatever the clock's resolution
        with self.assertRaises(RuntimeError) as caught:
            data.batch([300])
        self.assertEqual(str(caught.exception), self.message(path, what="rewritten in place"))

    def test_a_batch_reader_refuses_a_file_replaced_between_epochs(self):
        path = os.path.join(self.folder.name, "replaced-batches.h5")
        shutil.copy(self.first, path)
        reader = legalnet.BatchReader(path, inputs="state", batch_size=64, block_rows=256, prefetch=0)
        self.assertEqual(sum(len(x) for x, _ in reader), len(self.x) // 64 * 64)
        os.replace(shutil.copy(self.second, path + ".new"), path)
        with self.assertRaises(RuntimeError) as caught:
            next(iter(reader))
        self.assertEqual(str(caught.exception), self.message(path, owner="BatchReader"))


class BatchedFetch(TinyDatasetCase):
    """Why a shuffled DataLoader over a Dataset runs near h5py's raw read (issue 61): the loader
    fetches each batch with one ``__getitems__`` (never ``__getitem__`` per row), each chunk the
    epoch touches is read and decoded once, whole, into the cache, each batch is encoded once
    with numpy, and the default collate hands those tensors on without stacking items. The
    rates themselves are timed by bench/dataset_vs_h5py.py, not here."""

    def counted_epoch(self, data, batch_size=64):
        """One shuffled epoch without workers: its batches, the chunks decoded, the encodings
        made and the batched fetches, with per-row fetches refused."""
        chunk, encode, fetch = rows._Reader._read, rows._Rows.encode, legalnet.Dataset.__getitems__
        decoded, encoded, fetched = [], [], []

        def counted_chunk(reader, c):
            decoded.append(c)
            return chunk(reader, c)

        def counted_encode(r, *args, **kw):
            encoded.append(encode(r, *args, **kw))
            return encoded[-1]

        def counted_fetch(d, indices):
            fetched.append(list(indices))
            return fetch(d, indices)

        loader = torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True,
                                             generator=torch.Generator().manual_seed(5))
        with mock.patch.object(rows._Reader, "_read", counted_chunk), \
                mock.patch.object(rows._Rows, "encode", counted_encode), \
                mock.patch.object(legalnet.Dataset, "__getitems__", counted_fetch), \
                mock.patch.object(legalnet.Dataset, "__getitem__", side_effect=AssertionError("a row alone")):
            batches = list(loader)
        return batches, decoded, encoded, fetched

    def check_epoch(self, data):
        batches, decoded, encoded, fetched = self.counted_epoch(data)
        chunks = -(-len(self.x) // 256)
        self.assertGreater(chunks, 2)
        self.assertEqual(sorted(decoded), list(range(chunks)))  # every chunk once, whole
        self.assertEqual(len(fetched), len(batches))  # one batched fetch per batch
        self.assertEqual(len(encoded), len(batches))  # one encoding per batch
        for (x, y), (ex, ey), indices in zip(batches, encoded, fetched):
            self.assertIs(x, ex)  # the batch as encoded, not stacked again item by item
            self.assertIs(y, ey)
            self.assertTrue(torch.equal(x, self.x[indices]) and torch.equal(y, self.y[indices]))
        self.assertEqual(sorted(i for indices in fetched for i in indices), list(range(len(self.x))))

    def test_a_shuffled_loader_decodes_each_chunk_once_and_fetches_whole_batches(self):
        data = legalnet.Dataset(self.path, inputs="state")
        self.assertIsNotNone(data._shared)
        self.check_epoch(data)
        # The next epoch reads the cache: nothing decoded again.
        self.assertEqual(self.counted_epoch(data)[1], [])

    def test_so_does_a_cache_of_this_process(self):
        self.check_epoch(per_process(self.path))

    def test_chunks_decoded_together_are_the_chunks_decoded_alone(self):
        reader = rows._Reader(self.path)
        self.assertGreater(reader.chunks, 2)
        together = reader.decode_chunks(range(reader.chunks))
        for c, rows_together in enumerate(together):
            alone = reader.decode_chunks([c])[0]
            for field in ("squares", "side", "castling", "en_passant", "counts"):
                self.assertTrue(np.array_equal(getattr(alone, field), getattr(rows_together, field)), (c, field))
            self.assertTrue(np.array_equal(alone.moves[rows._ranges(alone.starts, alone.counts)],
                                           rows_together.moves[rows._ranges(rows_together.starts,
                                                                            rows_together.counts)]), c)
        reader.close()

    def test_a_bad_row_decoded_with_other_chunks_is_named_by_its_row_in_the_file(self):
        path = os.path.join(self.folder.name, "bad-late-row.h5")
        shutil.copy(self.path, path)
        bad = 2 * 256 + 17  # in the third chunk
        with h5py.File(path, "r+") as f:
            f["castling"][bad] = 200
        for data in (legalnet.Dataset(path, inputs="state"), per_process(path)):
            with self.assertRaises(ValueError) as caught:
                data.batch([0, bad])  # chunks 0 and 2: the bad row is the 274th decoded
            self.assertEqual(str(caught.exception), f"{path}: row {bad}: castling is 200, not 0..15")

    def test_the_benchmark_measures_the_ratios_in_one_run(self):
        import subprocess
        run = subprocess.run([sys.executable, BENCH, self.path, "--rounds", "1", "--batch", "64"],
                             capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"\n0 workers / h5py = \d+\.\d\d \(bar >= 0\.40\): (met|MISSED)\n")
        self.assertRegex(run.stdout, r"\n2 workers / 0 workers = \d+\.\d\d \(bar >= 1\.00\): (met|MISSED)\n")


if __name__ == "__main__":
    unittest.main()
