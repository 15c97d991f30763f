"""legalnet datasets (HDF5, docs/dataset.md) as PyTorch data: items and batches of network inputs
and targets for an input kind, exactly as ``train`` builds them in C++."""
import os

import h5py
import numpy as np
import torch

from .inputs import encode_batch, encode_targets, input_kind, squares_from_planes

FORMAT = "legalnet-dataset"


def _check_storage(path, f):
    """Refuses datasets whose values live outside the file: external raw storage (any file on the
    machine, or a FIFO that never ends) and virtual datasets other than ``tensorize merge``'s (each
    source a regular file beside it holding a column of the same name stored in itself)."""
    folder = os.path.dirname(os.path.abspath(path))
    found = []
    f.visititems(lambda name, obj: found.append((name, obj)) if isinstance(obj, h5py.Dataset) else None)
    for name, dset in found:
        if dset.external:
            raise ValueError(f"{path}: dataset '{name}' keeps its values in an external file; "
                             "only data inside the file is read")
        if not dset.is_virtual:
            continue
        for source in dset.virtual_sources():
            at = f"{path}: dataset '{name}' is joined from '{source.file_name}'"
            if "%" in source.file_name or source.dset_name.lstrip("/") != name or "/" in name:
                raise ValueError(f"{at}, not as tensorize merge joins shards")
            shard = os.path.join(folder, source.file_name)
            if not os.path.isfile(shard):
                raise ValueError(f"{at}, which is missing or not a regular file")
            if os.path.samefile(shard, path):
                raise ValueError(f"{at}, which is this file itself")
            try:
                s = h5py.File(shard, "r")
            except OSError:
                raise ValueError(f"{at}, which is not a legalnet dataset") from None
            with s:
                column = s.get(name)
                if not isinstance(column, h5py.Dataset) or column.is_virtual or column.external:
                    raise ValueError(f"{at}, whose '{name}' is not stored in that file itself")


def _open(path):
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file (a dataset is read from a file on disk)")
    f = h5py.File(path, "r")
    try:
        _check_storage(path, f)
    except BaseException:
        f.close()
        raise
    fmt = f.attrs.get("format")
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt != FORMAT:
        f.close()
        raise ValueError(f"{path}: not a legalnet dataset (format {fmt!r})")
    return f


def _encode_rows(f, inputs, start, stop):
    """Inputs and targets of the contiguous rows [start, stop)."""
    squares, side = squares_from_planes(f["positions"][start:stop])
    x = encode_batch(inputs, squares, side, f["castling"][start:stop], f["en_passant"][start:stop])
    y = encode_targets(inputs, f["legal_moves"][start:stop], side)
    return x, y


class Dataset(torch.utils.data.Dataset):
    """Items ``(x float32 [C, 8, 8], y float32 [4096])`` of the rows ``rows`` (all by default) of
    a legalnet dataset, for the input kind ``inputs``. Random access reads a compressed chunk per
    item: to train, iterate ``BatchReader``, which reads whole chunks."""

    def __init__(self, path, inputs="planes", rows=None):
        input_kind(inputs)
        self.path, self.inputs = str(path), inputs
        with _open(self.path) as f:
            n = len(f["positions"])
        self.rows = np.arange(n) if rows is None else np.asarray(rows, dtype=np.int64)
        if len(self.rows) and (self.rows.min() < 0 or self.rows.max() >= n):
            raise IndexError(f"{path}: rows must be in 0..{n - 1}")
        self._file = None  # opened lazily, once per DataLoader worker

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        if self._file is None:
            self._file = _open(self.path)
        r = int(self.rows[i])
        x, y = _encode_rows(self._file, self.inputs, r, r + 1)
        return torch.from_numpy(x[0]), torch.from_numpy(y[0])

    def __getstate__(self):  # DataLoader workers open their own handle
        state = dict(self.__dict__)
        state["_file"] = None
        return state


class BatchReader:
    """Shuffled batches ``(x [B, C, 8, 8], y [B, 4096])`` for training from Python at the speed of
    contiguous reads: each epoch reads blocks of ``block_rows`` contiguous rows in a shuffled order,
    ``buffer_blocks`` at a time, and shuffles their rows in memory. ``max_ply`` keeps rows with
    ply <= max_ply (the ``train --max-plies`` filter). Deterministic for a (seed, epoch)."""

    def __init__(self, path, inputs="planes", batch_size=256, seed=0, block_rows=8192, buffer_blocks=8,
                 max_ply=None, drop_last=True):
        input_kind(inputs)
        self.path, self.inputs, self.batch_size = str(path), inputs, int(batch_size)
        self.seed, self.block_rows, self.buffer_blocks = seed, int(block_rows), int(buffer_blocks)
        self.max_ply, self.drop_last, self.epoch = max_ply, drop_last, 0
        with _open(self.path) as f:
            self.rows = len(f["positions"])

    def __len__(self):
        if self.max_ply is not None:
            raise TypeError("the number of batches with max_ply is known after reading the plies")
        return self.rows // self.batch_size if self.drop_last else -(-self.rows // self.batch_size)

    def __iter__(self):
        rng = np.random.default_rng([self.seed, self.epoch])
        self.epoch += 1
        starts = np.arange(0, self.rows, self.block_rows)
        rng.shuffle(starts)
        carry_x = carry_y = None
        with _open(self.path) as f:
            for g in range(0, len(starts), self.buffer_blocks):
                xs, ys = [], []
                for start in starts[g:g + self.buffer_blocks]:
                    stop = min(start + self.block_rows, self.rows)
                    x, y = _encode_rows(f, self.inputs, start, stop)
                    if self.max_ply is not None:
                        keep = f["ply"][start:stop] <= self.max_ply
                        x, y = x[keep], y[keep]
                    xs.append(x)
                    ys.append(y)
                if carry_x is not None:
                    xs.insert(0, carry_x)
                    ys.insert(0, carry_y)
                x, y = np.concatenate(xs), np.concatenate(ys)
                order = rng.permutation(len(x))
                x, y = x[order], y[order]
                full = len(x) // self.batch_size * self.batch_size
                for b in range(0, full, self.batch_size):
                    yield torch.from_numpy(x[b:b + self.batch_size]), torch.from_numpy(y[b:b + self.batch_size])
                carry_x, carry_y = x[full:], y[full:]
        if carry_x is not None and len(carry_x) and not self.drop_last:
            yield torch.from_numpy(carry_x), torch.from_numpy(carry_y)
