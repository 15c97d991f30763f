"""legalnet datasets (HDF5, docs/dataset.md) as PyTorch data: items and batches of network inputs
and targets for an input kind, exactly as ``train`` builds them in C++.

Where the time goes, and what is done about it: a row's legal moves are 4 KB of zlib-compressed
masks, stored 256 rows to a chunk. Reading a row alone decompresses its whole chunk (1 MiB), so
rows are never read alone: whole chunks are read and decoded once into compact rows (board
codes, side, castling, en passant and the list of legal-move indices, about 140 bytes a row)
that ``Dataset`` keeps in a cache (one shared with the DataLoader workers it forks, when the
file fits it) and ``BatchReader`` in its shuffle buffer. Inputs and targets are built from
compact rows a batch at a time, with numpy.

The work is split by job: ``dataset_format`` (the column tables, the checks made when a file is
opened, a file's identity), ``rows`` (compact rows, and the reader that decodes a chunk into
them with train's checks), ``chunk_cache`` (the caches of decoded chunks: per process, or shared
with the workers a Dataset forks), ``batch_reader`` (``BatchReader``) and this module (the torch
classes ``Dataset`` and ``BlockShuffleSampler``, and the batched fetch through the DataLoader)."""
import collections.abc
import itertools
import os

import numpy as np
import torch

from .batch_reader import BatchReader
from .chunk_cache import CACHED_ROW_BYTES, _ChunkCache, _SharedChunkCache, _SharedChunks
from .dataset_format import FORMAT, GAME_COLUMNS, ROW_COLUMNS, ROW_SHAPES, _identity, _open
from .inputs import DEFAULT_INPUT_KIND, input_kind
from .rows import _Reader, _Rows

# Names this module held before it was split (issue 61), for code that imports them from here.
__all__ = ["BatchReader", "BlockShuffleSampler", "CACHED_ROW_BYTES", "Dataset", "FORMAT", "GAME_COLUMNS",
           "ROW_COLUMNS", "ROW_SHAPES"]


class Dataset(torch.utils.data.Dataset):
    """Items ``(x float32 [C, 8, 8], y float32 [4096])`` of the rows ``rows`` (all by default) of
    a legalnet dataset, for the input kind ``inputs``, as ``train`` builds them.

    Fast under a DataLoader: it fetches a whole batch at once (``__getitems__``), decodes each
    compressed chunk once into a cache of compact rows (``cache_bytes``, about 140 bytes a row:
    256 MiB hold 1.9 M rows), and each worker opens the file itself. When the whole file's rows
    fit the cache, the cache is memory shared by the process that made the Dataset and the
    DataLoader workers it forks, so that a chunk one worker decoded is not decoded again by
    another (spawned workers, or a larger file, keep a cache per process). With
    ``shuffle=True`` that is fast while the rows fit the cache; for more rows, pass
    ``sampler=BlockShuffleSampler(dataset)``, which visits chunks in a shuffled order.

    It reads the file it was made on: a process that opens the name later (a DataLoader worker)
    and finds another file there (one moved onto the name, or the file rewritten in place) raises
    RuntimeError rather than mixing the rows of both; make a new Dataset for the new file."""

    def __init__(self, path, inputs=DEFAULT_INPUT_KIND, rows=None, cache_bytes=256 << 20):
        input_kind(inputs)
        self.path, self.inputs, self.cache_bytes = str(path), inputs, int(cache_bytes)
        with _open(self.path) as f:
            # What the file is: every process that reads it later checks that it opened this one.
            self._identity = _identity(self.path, f)
            n = len(f["positions"])
            self.rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
            if len(self.rows) and (self.rows.min() < 0 or self.rows.max() >= n):
                raise IndexError(f"{path}: rows must be in 0..{n - 1}")
            # Made here, before any DataLoader forks its workers; None: a cache per process.
            self._shared = _SharedChunks.create(f, self.cache_bytes)
        self._cache = None  # opened lazily, in the process that reads

    def __len__(self):
        return len(self.rows)

    def _rows_of(self, indices):
        """Compact rows of the items `indices`."""
        if self._cache is None or self._cache.reader.pid != os.getpid():  # not a handle from before a fork
            # RuntimeError when the file under the name is no longer the one the Dataset was made on.
            reader, shared = _Reader(self.path, identity=getattr(self, "_identity", None)), self._shared
            if shared is not None and (shared.rows, shared.chunk_rows) == (reader.rows, reader.chunk_rows):
                self._cache = _SharedChunkCache(reader, shared, self.cache_bytes)
            else:
                self._cache = _ChunkCache(reader, self.cache_bytes)
        file_rows = self.rows[np.asarray(indices, dtype=np.int64).reshape(-1)]
        step = self._cache.slots
        parts = [self._cache.take(file_rows[i:i + step]) for i in range(0, len(file_rows), step)]
        return parts[0] if len(parts) == 1 else _Rows.concat(parts)

    def batch(self, indices):
        """The items `indices` as one batch ``(x [B, C, 8, 8], y [B, 4096])``."""
        return self._rows_of(indices).encode(self.inputs, shared=torch.utils.data.get_worker_info() is not None)

    def __getitems__(self, indices):  # the DataLoader's batched fetch (torch >= 2.0)
        return _Items(self._rows_of(indices), self.inputs)

    def __getitem__(self, i):
        x, y = self.batch([i])
        return x[0], y[0]

    def __getstate__(self):  # DataLoader workers (spawn) open their own handle and keep their own cache
        state = dict(self.__dict__)
        state["_cache"] = state["_shared"] = None
        return state


class _Item(collections.abc.Sequence):
    """One item ``(x, y)`` of a batch fetched by ``Dataset.__getitems__``, made on demand."""
    __slots__ = ("batch", "index")

    def __init__(self, batch, index):
        self.batch, self.index = batch, index

    def __len__(self):
        return 2

    def __getitem__(self, k):
        return self.batch.encoded()[k][self.index]


class _Items(list):
    """The items of one batch, as the DataLoader's collate function receives them: the batch's
    compact rows, encoded once when an item is first looked at. The default collate stacks the
    items of a batch into new tensors; ``_collate_items`` (registered with torch's default
    collate below, for this type only) hands the whole batch over instead. Any other use sees
    a list of (x, y) pairs."""

    def __init__(self, rows, inputs):
        super().__init__(_Item(self, i) for i in range(len(rows)))
        self.rows, self.inputs, self._encoded = rows, inputs, None

    def encoded(self):
        if self._encoded is None:
            self._encoded = self.rows.encode(self.inputs)
        return self._encoded


def _collate_items(batch, *, collate_fn_map=None):
    if isinstance(batch, _Items) and len(batch) == len(batch.rows) and \
            all(item.batch is batch and item.index == i for i, item in enumerate(batch)):
        if torch.utils.data.get_worker_info() is not None:
            return _CompactBatch(batch)
        return list(batch.encoded())
    rows = [tuple(item) for item in batch]  # a batch put together otherwise: stacked as usual
    return torch.utils.data.default_collate(rows)


class _CompactBatch(collections.abc.Sequence):
    """A DataLoader worker's batch ``[x, y]`` on its way to the main process: pickled as its
    compact rows (about 140 bytes a row) and encoded when it is unpickled there, into private
    memory. Handing over the float tensors instead (10.8 MB for 512 ``state`` rows, 99% of it
    the 4096-wide targets) went through shared memory, whose fresh pages cost the main process
    more to fault in than encoding the rows costs (docs/benchmarks.md, issue 33). Code in the
    worker that looks at the batch (a collate_fn around the default one) sees ``[x, y]``."""

    def __init__(self, items):
        self.items = items

    def __len__(self):
        return 2

    def __getitem__(self, k):
        return self.items.encoded()[k]

    def __reduce__(self):
        r = self.items.rows
        return _encoded_batch, (r.squares, r.side, r.castling, r.en_passant, r.moves, r.counts, self.items.inputs)


def _encoded_batch(squares, side, castling, en_passant, moves, counts, inputs):
    """``[x, y]`` of a ``_CompactBatch``'s rows (dense: ``_Rows.take`` made them)."""
    return list(_Rows(squares, side, castling, en_passant, None, moves, np.cumsum(counts) - counts,
                      counts).encode(inputs))


torch.utils.data._utils.collate.default_collate_fn_map[_Item] = _collate_items


class BlockShuffleSampler(torch.utils.data.Sampler):
    """The items of a Dataset in the order ``train --data-mode stream`` reads rows: blocks of
    ``block_rows`` consecutive items in a shuffled order, ``buffer_blocks`` blocks at a time with
    their items shuffled together. Each chunk is then decoded once an epoch and only
    ``block_rows * buffer_blocks`` rows need to be cached, however large the dataset. A new
    order each epoch (or the one ``set_epoch`` names), the same for the same seed.

    With DataLoader workers give ``workers`` and ``batch_size`` (the DataLoader's): block b then
    belongs to worker b mod workers, as train's blocks to its ranks, and the batches of the
    workers' streams take turns as the DataLoader hands batches to its workers, so that each
    worker decodes only its own blocks instead of every chunk."""

    def __init__(self, data_source, block_rows=8192, buffer_blocks=8, seed=0, workers=1, batch_size=1):
        self.items, self.block_rows, self.buffer_blocks = len(data_source), int(block_rows), int(buffer_blocks)
        self.workers, self.batch_size = max(1, int(workers)), int(batch_size)
        if self.block_rows < 1 or self.buffer_blocks < 1 or self.batch_size < 1:
            raise ValueError("block_rows, buffer_blocks and batch_size must be at least 1")
        self.seed, self.epoch = seed, 0

    def __len__(self):
        return self.items

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __iter__(self):
        rng = np.random.default_rng([self.seed, self.epoch])
        self.epoch += 1
        starts = np.arange(0, self.items, self.block_rows)
        rng.shuffle(starts)
        streams = [self._stream(starts[starts // self.block_rows % self.workers == w], rng)
                   for w in range(self.workers)]
        if self.workers == 1:
            yield from streams[0]
            return
        # Batch k of the DataLoader goes to worker k mod workers: take batch_size items from each
        # stream in turn (the last batches of longer streams follow one another).
        while streams:
            for stream in list(streams):
                batch = list(itertools.islice(stream, self.batch_size))
                if len(batch) < self.batch_size:
                    streams.remove(stream)
                yield from batch

    def _stream(self, starts, rng):
        for g in range(0, len(starts), self.buffer_blocks):
            group = np.concatenate([np.arange(s, min(s + self.block_rows, self.items))
                                    for s in starts[g:g + self.buffer_blocks]])
            yield from rng.permutation(group).tolist()
