"""``BatchReader``: shuffled batches for training from Python without a DataLoader, read in
contiguous blocks of whole chunks on threads of its own, as ``train --data-mode stream``."""
import queue
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .dataset_format import _identity, _open
from .inputs import DEFAULT_INPUT_KIND, input_kind
from .rows import _Reader, _Rows

class BatchReader:
    """Shuffled batches ``(x [B, C, 8, 8], y [B, 4096])`` for training from Python at the speed of
    contiguous reads: each epoch reads blocks of ``block_rows`` contiguous rows in a shuffled order,
    ``buffer_blocks`` at a time, and shuffles their rows in memory. ``position_ply_limit`` N > 0
    keeps the rows with ply < N (``train --position-ply-limit``; 0: all; the old ``max_ply`` M,
    ply <= M, still works and warns). Deterministic for a (seed, epoch).

    ``threads`` threads inflate chunks, the next group of blocks while the current one is
    served; with ``prefetch`` > 0 a background thread prepares that many batches ahead, so that
    reading overlaps the training step. Each epoch opens the file again and raises RuntimeError
    when it is no longer the one the BatchReader was made on."""

    def __init__(self, path, inputs=DEFAULT_INPUT_KIND, batch_size=256, seed=0, block_rows=8192, buffer_blocks=8,
                 position_ply_limit=0, drop_last=True, prefetch=4, threads=2, max_ply=None):
        input_kind(inputs)
        if max_ply is not None:
            warnings.warn("BatchReader: max_ply is deprecated, use position_ply_limit (max_ply + 1)",
                          DeprecationWarning, stacklevel=2)
            position_ply_limit = max_ply + 1 if max_ply >= 0 else 0
        self.path, self.inputs, self.batch_size = str(path), inputs, int(batch_size)
        self.seed, self.block_rows, self.buffer_blocks = seed, int(block_rows), int(buffer_blocks)
        if self.batch_size < 1 or self.block_rows < 1 or self.buffer_blocks < 1:
            raise ValueError("batch_size, block_rows and buffer_blocks must be at least 1")
        if int(position_ply_limit) < 0:
            raise ValueError("position_ply_limit must be 0 (all positions) or positive")
        self.position_ply_limit, self.drop_last, self.epoch = int(position_ply_limit), drop_last, 0
        self.prefetch, self.threads = int(prefetch), max(1, int(threads))
        with _open(self.path) as f:
            self._identity = _identity(self.path, f)  # each epoch opens the file again, and checks it is this one
            self.rows = len(f["positions"])

    def __len__(self):
        if self.position_ply_limit:
            raise TypeError("the number of batches with position_ply_limit is known after reading the plies")
        return self.rows // self.batch_size if self.drop_last else -(-self.rows // self.batch_size)

    def __iter__(self):
        batches = self._batches(self.epoch)
        self.epoch += 1
        return _in_background(batches, self.prefetch) if self.prefetch > 0 else batches

    def _block_rows(self, reader, futures, start):
        """The compact rows of the block at `start`, from its chunks' futures."""
        parts = [f.result() for f in futures]
        rows = parts[0] if len(parts) == 1 else _Rows.concat(parts)
        first = start % reader.chunk_rows
        count = min(self.block_rows, self.rows - start)
        if first or count != len(rows):
            rows = rows.take(np.arange(first, first + count))
        if self.position_ply_limit:
            rows = rows.take(np.flatnonzero(rows.ply < self.position_ply_limit))
        return rows

    def _batches(self, epoch):
        rng = np.random.default_rng([self.seed, epoch])
        starts = np.arange(0, self.rows, self.block_rows)
        rng.shuffle(starts)
        groups = [starts[g:g + self.buffer_blocks] for g in range(0, len(starts), self.buffer_blocks)]
        reader = _Reader(self.path, with_ply=self.position_ply_limit > 0, identity=self._identity, owner="BatchReader")
        pool = ThreadPoolExecutor(self.threads)
        try:
            r = reader.chunk_rows

            def submit(group):  # each block's chunk futures, in order
                return [(s, [pool.submit(reader.chunk, c) for c in range(s // r, -(-min(s + self.block_rows,
                                                                                          self.rows) // r))])
                        for s in group.tolist()]

            pending = submit(groups[0]) if groups else []
            carry = None
            for k in range(len(groups)):
                blocks = [self._block_rows(reader, futures, s) for s, futures in pending]
                pending = submit(groups[k + 1]) if k + 1 < len(groups) else []
                rows = _Rows.concat(([carry] if carry is not None else []) + blocks)
                order = rng.permutation(len(rows))
                full = len(rows) // self.batch_size * self.batch_size
                for b in range(0, full, self.batch_size):
                    yield rows.take(order[b:b + self.batch_size]).encode(self.inputs)
                carry = rows.take(order[full:])
            if carry is not None and len(carry) and not self.drop_last:
                yield carry.encode(self.inputs)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            reader.close()


def _in_background(items, depth):
    """The items of a generator, made on a background thread up to `depth` ahead. Its
    exceptions reach the consumer; a consumer that stops early stops the thread."""
    out = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item, error=None):  # False when the consumer has gone
        while not stop.is_set():
            try:
                out.put((item, error), timeout=0.1)
                return True
            except queue.Full:
                pass
        return False

    def run():
        try:
            for item in items:
                if not put(item):
                    return
            put(done)
        except BaseException as e:  # handed to the consumer
            put(done, e)
        finally:
            items.close()

    thread = threading.Thread(target=run, name="legalnet-batches", daemon=True)
    thread.start()

    def consume():
        try:
            while True:
                item, error = out.get()
                if error is not None:
                    raise error
                if item is done:
                    return
                yield item
        finally:
            stop.set()
            thread.join()

    return consume()
