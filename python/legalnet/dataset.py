"""legalnet datasets (HDF5, docs/dataset.md) as PyTorch data: items and batches of network inputs
and targets for an input kind, exactly as ``train`` builds them in C++.

Where the time goes, and what is done about it: a row's legal moves are 4 KB of zlib-compressed
masks, stored 256 rows to a chunk. Reading a row alone decompresses its whole chunk (1 MiB), so
rows are never read alone: whole chunks are read and decoded once into compact rows (board
codes, side, castling, en passant and the list of legal-move indices, about 140 bytes a row)
that ``Dataset`` keeps in a cache (one shared with the DataLoader workers it forks, when the
file fits it) and ``BatchReader`` in its shuffle buffer. Inputs and targets are built from
compact rows a batch at a time, with numpy. Chunks stored as tensorize and h5py store them
(deflate, with or without shuffle, which is the identity for one-byte values) are read with
HDF5's direct chunk read and inflated by Python's zlib, which lets other threads run
meanwhile; any other storage goes through HDF5's own filters."""
import collections.abc
import contextlib
import itertools
import mmap
import os
import queue
import threading
import warnings
import weakref
import zlib
from concurrent.futures import ThreadPoolExecutor

try:
    import fcntl
except ImportError:  # not a POSIX system: a cache per process
    fcntl = None

import h5py
import numpy as np
import torch

from .fen import position_errors
from .inputs import DEFAULT_INPUT_KIND, encode_batch, input_kind
from .moves import FLIP_RANKS, MOVE_INDICES

FORMAT = "legalnet-dataset"
# The dataset's columns, name -> (element type, each row's shape), in the order of the C++
# tables (lib/data/dataset_format.h ROW_COLUMNS and GAME_COLUMNS; tests/python/test_package.py
# checks them against a file tensorize wrote from those tables).
ROW_COLUMNS = {"positions": ("int8", (7, 8, 8)), "legal_moves": ("uint8", (MOVE_INDICES,)),
               "played_move": ("int16", ()), "played_promotion": ("int8", ()), "game": ("int64", ()),
               "ply": ("int32", ()), "castling": ("uint8", ()), "en_passant": ("int8", ()),
               "halfmove_clock": ("int32", ()), "fullmove_number": ("int32", ())}
GAME_COLUMNS = {"first_row": ("int64", ()), "num_rows": ("int32", ()), "plies": ("int32", ()),
                "source": ("int32", ()), "source_game": ("int64", ()), "source_line": ("int64", ()),
                "result": ("int8", ()), "termination": ("int8", ())}
# The columns the readers take, with each row's shape.
ROW_SHAPES = {name: ROW_COLUMNS[name][1] for name in ("positions", "legal_moves", "castling", "en_passant", "ply")}
# Rows decoded together when a file's chunks cannot be read directly (merge's virtual datasets).
FALLBACK_CHUNK_ROWS = 256
# What a cached row costs: its fixed fields plus room for 40 legal moves (random games average
# about 30); the moves' array grows when a file needs more.
CACHED_ROW_BYTES = 64 + 3 + 8 + 4 + 2 * 40
PIECE_TYPES = np.arange(1, 7, dtype=np.int8).reshape(1, 6, 1)


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
            _check_stored_size(path, name, dset)
            continue
        # HDF5 looks for a relative source under $HDF5_VDS_PREFIX before the file's folder (the
        # variable outranks any access property): the shards checked here would not be read.
        prefix = os.environ.get("HDF5_VDS_PREFIX")
        if prefix:
            raise ValueError(f"{path}: dataset '{name}' is joined from shards, and HDF5_VDS_PREFIX "
                             f"({prefix!r:.100}) would make HDF5 read them from elsewhere than beside the file; "
                             "unset it")
        for source in dset.virtual_sources():
            at = f"{path}: dataset '{name}' is joined from '{source.file_name}'"
            if "%" in source.file_name or source.dset_name.lstrip("/") != name or "/" in name:
                raise ValueError(f"{at}, not as tensorize merge joins shards")
            # A plain file name, the shard beside the file: an absolute name or one with a folder
            # could be any file on the machine.
            if "/" in source.file_name or source.file_name == "..":
                raise ValueError(f"{at}, which is not beside it (merge joins only shards in the file's own folder)")
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
                column = s.get(name) if isinstance(s.get(name, getlink=True), h5py.HardLink) else None
                if not isinstance(column, h5py.Dataset) or column.is_virtual or column.external:
                    raise ValueError(f"{at}, whose '{name}' is not stored in that file itself")


def _check_hard_link(path, f, name):
    """Only a hard link, to an object of this file: h5py would follow a soft link to another name
    and an external link into another file (any file on the machine, or a FIFO that never ends)."""
    link = f.get(name, getlink=True)
    if link is None or isinstance(link, h5py.HardLink):
        return
    kind = ("an external link (into another file)" if isinstance(link, h5py.ExternalLink)
            else "a soft link (to another name)" if isinstance(link, h5py.SoftLink) else "a user-defined link")
    raise ValueError(f"{path}: dataset '{name}' is {kind}; only the file's own datasets are read")


def _check_columns(path, f):
    """The row columns the readers use: present, integer, one row shape, one row count."""
    rows = None
    for name, tail in ROW_SHAPES.items():
        _check_hard_link(path, f, name)
        column = f.get(name)
        if not isinstance(column, h5py.Dataset):
            raise ValueError(f"{path}: no dataset '{name}' (not a legalnet dataset)")
        if column.dtype.kind not in "iu" or column.ndim != 1 + len(tail) or column.shape[1:] != tail:
            raise ValueError(f"{path}: dataset '{name}' holds {column.dtype} {column.shape}, "
                             f"expected integers (N{''.join(', ' + str(d) for d in tail)})")
        if rows is not None and column.shape[0] != rows:
            raise ValueError(f"{path}: dataset '{name}' has {column.shape[0]} rows, 'positions' {rows}")
        rows = column.shape[0]


def _check_stored_size(path, name, dset):
    """Refuses a dataset that claims more values than its stored bytes can hold (2^40 rows of
    chunks never written, read as zeros; a filter that stores a chunk of any size in a few bytes):
    gzip inflates at most 1032 bytes per byte stored."""
    dcpl = dset.id.get_create_plist()
    filters = set(dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters()))
    foreign = filters - {h5py.h5z.FILTER_DEFLATE, h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_FLETCHER32}
    if foreign:
        raise ValueError(f"{path}: dataset '{name}' is stored through HDF5 filter {min(foreign)}, "
                         "which this reader does not take (gzip and shuffle only)")
    claimed, stored = dset.size * dset.dtype.itemsize, dset.id.get_storage_size()
    most = stored * 1032 if h5py.h5z.FILTER_DEFLATE in filters else stored
    if claimed > most and stored < claimed:
        raise ValueError(f"{path}: dataset '{name}' claims {claimed} bytes of values but stores {stored} bytes")


def _open(path):
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file (a dataset is read from a file on disk)")
    f = h5py.File(path, "r")
    try:
        _check_storage(path, f)
        fmt = f.attrs.get("format")
        if isinstance(fmt, bytes):
            fmt = fmt.decode()
        if fmt != FORMAT:
            raise ValueError(f"{path}: not a legalnet dataset (format {fmt!r})")
        _check_columns(path, f)
    except BaseException:
        f.close()
        raise
    return f


def _identity(path, f):
    """What the open file ``f`` (h5py) is: (st_dev, st_ino, st_size, st_mtime_ns) of HDF5's own
    descriptor (the sec2 driver's, the default), else of a stat of ``path`` made just after it was
    opened. A Dataset records it when made, and every handle opened later (in a DataLoader worker,
    or an epoch of BatchReader) must match it."""
    try:
        st = os.fstat(f.id.get_vfd_handle()) if f.driver == "sec2" else os.stat(path)
    except (OSError, RuntimeError, TypeError, ValueError):
        st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _check_identity(path, expected, found, owner="Dataset"):
    """RuntimeError when the file now open as ``path`` is not the one ``expected`` names: another
    file moved onto the name (a new inode or size), or the file rewritten in place (its time)."""
    if expected is None or found == expected:
        return
    what = "a new inode or size" if found[:3] != expected[:3] else "rewritten in place"
    raise RuntimeError(f"{path}: the file changed since this {owner} was opened ({what}): it holds another "
                       f"dataset now; make a new {owner}")


def _ranges(starts, counts):
    """The indices starts[i] .. starts[i] + counts[i] - 1 of every i, one after the other."""
    ends = np.cumsum(counts)
    return np.repeat(starts - (ends - counts), counts) + np.arange(ends[-1] if len(ends) else 0)


class _Rows:
    """Positions in compact form: squares int8 [n, 64] (signed piece codes), side int8 [n]
    (+1 / -1), castling uint8 [n], en_passant int8 [n], ply int32 [n] (or None when not read),
    and the legal-move indices of all rows in one array ``moves`` (int16), row i's being
    ``moves[starts[i]:starts[i] + counts[i]]``. Rows made by ``_decode``, ``take`` and ``concat``
    are dense (each row's moves follow the previous row's); the cache's are not, and are only
    taken from."""
    __slots__ = ("squares", "side", "castling", "en_passant", "ply", "moves", "starts", "counts")

    def __init__(self, squares, side, castling, en_passant, ply, moves, starts, counts):
        self.squares, self.side, self.castling, self.en_passant, self.ply = squares, side, castling, en_passant, ply
        self.moves, self.starts, self.counts = moves, starts, counts

    def __len__(self):
        return len(self.side)

    def take(self, idx):
        counts = self.counts[idx]
        return _Rows(self.squares[idx], self.side[idx], self.castling[idx], self.en_passant[idx],
                     None if self.ply is None else self.ply[idx], self.moves[_ranges(self.starts[idx], counts)],
                     np.cumsum(counts) - counts, counts)

    @staticmethod
    def concat(parts):
        counts = np.concatenate([p.counts for p in parts])
        return _Rows(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("squares", "side", "castling",
                                                                                 "en_passant")),
                     None if parts[0].ply is None else np.concatenate([p.ply for p in parts]),
                     np.concatenate([p.moves for p in parts]),
                     np.cumsum(counts) - counts, counts)

    def encode(self, inputs, shared=False):
        """(inputs float32 [n, C, 8, 8], targets float32 [n, 4096]) as tensors: the targets are
        1 at the legal moves in the network's frame (flipped when black moves and the inputs are
        in the mover's frame), as train's batches. ``shared``: in shared memory, which a
        DataLoader worker then hands to the main process without copying them."""
        n = len(self)
        x, y = _tensor((n, input_kind(inputs).planes, 8, 8), shared), _tensor((n, MOVE_INDICES), shared)
        encode_batch(inputs, self.squares, self.side, self.castling, self.en_passant, out=x.numpy())
        targets = y.numpy().reshape(-1)
        targets[...] = 0
        if n:
            at = np.repeat(np.arange(n, dtype=np.int64) * MOVE_INDICES, self.counts)
            moves = self.moves.astype(np.int64)
            if input_kind(inputs).mover_frame:
                moves ^= np.repeat(np.where(self.side < 0, FLIP_RANKS, 0), self.counts)
            targets[at + moves] = 1
        return x, y


def _tensor(shape, shared):
    """An uninitialised float32 tensor, in shared memory when `shared` (as torch's default
    collate makes a worker's batches)."""
    if shared:
        try:
            storage = torch.UntypedStorage._new_shared(int(np.prod(shape)) * 4)
            return torch.empty(0).set_(storage).view(shape)
        except (AttributeError, RuntimeError):  # another torch: the queue copies it to shared memory
            pass
    return torch.empty(shape)


def _nonzero(masks):
    """The offsets of the nonzero bytes of a uint8 array whose length is a multiple of 8. The
    masks are sparse (about 30 of 4096 bytes set): the nonzero 8-byte words are found first."""
    words = np.flatnonzero(masks.view(np.uint64) != 0)
    hits = np.flatnonzero(masks.reshape(-1, 8)[words] != 0)
    return words[hits >> 3] * 8 + (hits & 7)


def _adler32(size, offsets, values):
    """The Adler-32 of `size` bytes that are zero but for `values` at `offsets`:
    A = 1 + sum(b), B = sum over i of (1 + sum of b[j <= i]) = size + sum of b[j] * (size - j)."""
    values = values.astype(np.int64)
    a = (1 + int(values.sum())) % 65521
    b = (size + int((values * (size - offsets)).sum())) % 65521
    return b << 16 | a


def _check_rows(path, start, planes, castling, en_passant):
    """ValueError "<file>: row <r>: ..." for the first row the C++ readers refuse
    (lib/data/row_block.cpp): a plane value other than -1, 0 or +1, castling out of
    0..15, en_passant out of -1..63, two pieces on a square, or a position the FEN parser
    refuses (kings, pawns, castling rights, en passant, the side not to move in check)."""
    n = len(planes)
    planes = np.asarray(planes).reshape(n, 7, 64)
    castling = np.asarray(castling).astype(np.int64)
    en_passant = np.asarray(en_passant).astype(np.int64)
    value = (planes < -1) | (planes > 1)
    pieces = (planes[:, 1:] != 0).sum(1)
    squares = (planes[:, 1:].astype(np.int8) * PIECE_TYPES).sum(1, dtype=np.int8)
    side = np.where(planes[:, 0, 0] > 0, 1, -1).astype(np.int8)
    ok = ~value.any((1, 2)) & (castling >= 0) & (castling <= 15) & (en_passant >= -1) & (en_passant <= 63) & \
        ~(pieces > 1).any(1)
    position = position_errors(squares[ok], side[ok], castling[ok], en_passant[ok])
    bad = np.flatnonzero(~ok)
    if position is not None:
        bad = np.append(bad, np.flatnonzero(ok)[position[0]])
    if not len(bad):
        return
    r = int(bad.min())
    if value[r].any():
        k = int(np.flatnonzero(value[r].reshape(-1))[0])
        what = f"positions[{k // 64}][{k // 8 % 8}][{k % 8}] is {planes[r].reshape(-1)[k]}, not -1, 0 or +1"
    elif not 0 <= castling[r] <= 15:
        what = f"castling is {castling[r]}, not 0..15"
    elif not -1 <= en_passant[r] <= 63:
        what = f"en_passant is {en_passant[r]}, not -1..63"
    elif (pieces[r] > 1).any():
        what = f"not a position: two pieces on square {'abcdefgh'[int(np.argmax(pieces[r] > 1)) % 8]}" \
               f"{int(np.argmax(pieces[r] > 1)) // 8 + 1}"
    else:
        what = f"not a position: {position[1]}"
    raise ValueError(f"{path}: row {start + r}: {what}")


def _decode(planes, flat, castling, en_passant, ply):
    """Compact rows of the dataset's planes int8 [n, 7, 8, 8] and the offsets (row * 4096 +
    move index) of the nonzero bytes of their masks."""
    n = len(planes)
    planes = planes.reshape(n, 7, 64)
    squares = (planes[:, 1:] * PIECE_TYPES).sum(1, dtype=np.int8)
    side = np.where(planes[:, 0, 0] > 0, 1, -1).astype(np.int8)
    counts = np.bincount(flat >> 12, minlength=n).astype(np.int32)
    return _Rows(squares, side, castling, en_passant, ply, (flat & (MOVE_INDICES - 1)).astype(np.int16),
                 np.cumsum(counts) - counts, counts)


def _direct_read(dset):
    """How to read `dset`'s chunks without HDF5's filters: None when they cannot be (virtual,
    not chunked by whole rows, values wider than a byte, a filter other than shuffle and one
    deflate); else whether they are deflated."""
    if dset.is_virtual or dset.external or dset.chunks is None or dset.chunks[1:] != dset.shape[1:]:
        return None
    if dset.dtype.itemsize != 1:
        return None
    plist = dset.id.get_create_plist()
    filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
    if any(f not in (h5py.h5z.FILTER_SHUFFLE, h5py.h5z.FILTER_DEFLATE) for f in filters):
        return None
    if filters.count(h5py.h5z.FILTER_DEFLATE) > 1:
        return None
    return h5py.h5z.FILTER_DEFLATE in filters


def _chunking(positions, legal_moves):
    """(the direct-read mode of each column or None, the rows a chunk holds) for ``_Reader``."""
    modes = [_direct_read(d) for d in (positions, legal_moves)]
    same_chunks = positions.chunks and legal_moves.chunks and positions.chunks[0] == legal_moves.chunks[0]
    deflated = modes if None not in modes and same_chunks else None
    return deflated, positions.chunks[0] if deflated else FALLBACK_CHUNK_ROWS


class _Reader:
    """One process's view of a dataset file: its own handle (a DataLoader worker, forked or
    spawned, opens its own), the small per-row columns in memory, and the rows of one chunk of
    positions and legal_moves decoded at a time. ``chunk`` may run on several threads."""

    def __init__(self, path, with_ply=False, identity=None, owner="Dataset"):
        self.path = path
        self.pid = os.getpid()
        self.file = _open(path)
        # The file opened must be the one its Dataset or BatchReader (``owner``) was made on
        # (``identity``, _identity's): a file moved onto the name since gave rows of both, the
        # workers reading the new one and the shared cache holding chunks of the old.
        self.identity, self.owner = identity, owner
        try:
            self.fd = self.file.id.get_vfd_handle() if self.file.driver == "sec2" else None
            _check_identity(path, identity, _identity(path, self.file), owner)
        except BaseException:
            self.file.close()
            raise
        self.positions, self.legal_moves = self.file["positions"], self.file["legal_moves"]
        self.rows = len(self.positions)
        # As stored, for the checks; the compact rows keep them narrow once checked.
        self.castling_stored, self.en_passant_stored = self.file["castling"][:], self.file["en_passant"][:]
        self.castling = self.castling_stored.astype(np.uint8)
        self.en_passant = self.en_passant_stored.astype(np.int8)
        self.ply = self.file["ply"][:].astype(np.int32) if with_ply else None
        self.deflated, self.chunk_rows = _chunking(self.positions, self.legal_moves)
        self.chunks = -(-self.rows // self.chunk_rows)

    def close(self):
        self.file.close()

    def _direct_chunk(self, dset, deflated, start):
        """The stored bytes of the chunk at `start` when they can be read without HDF5's filters
        (None when not: HDF5 reads it, a chunk never written giving the fill value)."""
        if deflated is None:
            return None
        try:
            skipped, data = dset.id.read_direct_chunk((start,) + (0,) * (dset.ndim - 1))
        except RuntimeError:  # not written
            return None
        if skipped != 0:  # a filter was skipped for this chunk
            return None
        if not deflated and len(data) != self.chunk_rows * int(np.prod(dset.shape[1:])):
            raise ValueError(f"{self.path}: the chunk at row {start} of '{dset.name.lstrip('/')}' "
                             f"holds {len(data)} bytes, not {self.chunk_rows * int(np.prod(dset.shape[1:]))}")
        return data

    def _inflate(self, data, size, name, start, checksum=True):
        """The chunk's bytes, refused unless they inflate to exactly its size (a forged chunk
        could inflate to any size). Without `checksum`, the zlib stream's Adler-32 is returned
        beside them instead of being checked: the caller checks it from the bytes that are not
        zero, faster than zlib over all of them."""
        at = f"{self.path}: the chunk at row {start} of '{name.lstrip('/')}'"
        try:
            if checksum:
                z = zlib.decompressobj()
                out = z.decompress(data, size)
            else:  # RFC 1950: a 2-byte header (deflate, no preset dictionary), raw deflate, Adler-32
                if len(data) < 6 or data[0] & 0x0F != 8 or data[0] >> 4 > 7 or data[1] & 0x20 or \
                        (data[0] << 8 | data[1]) % 31:
                    raise zlib.error("not a zlib stream")
                z = zlib.decompressobj(-15)
                out = z.decompress(memoryview(data)[2:-4], size)
        except zlib.error as e:
            raise ValueError(f"{at} does not inflate ({e})") from None
        if len(out) != size or z.unconsumed_tail or not z.eof or z.unused_data:
            raise ValueError(f"{at} does not inflate to its {size} bytes")
        return out if checksum else (out, int.from_bytes(data[-4:], "big"))

    def check_unchanged(self):
        """RuntimeError when the open file was rewritten in place since it was recorded (its size
        or time changed): one fstat, made before each chunk is read."""
        if self.identity is not None and self.fd is not None:
            st = os.fstat(self.fd)
            _check_identity(self.path, self.identity, (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), self.owner)

    def chunk(self, c):
        self.check_unchanged()
        start = c * self.chunk_rows
        stop = min(start + self.chunk_rows, self.rows)
        modes = self.deflated or (None, None)
        shape = (self.chunk_rows, 7, 8, 8)
        data = self._direct_chunk(self.positions, modes[0], start)
        if data is None:
            planes = self.positions[start:stop]
        else:
            raw = self._inflate(data, int(np.prod(shape)), "positions", start) if modes[0] else data
            planes = np.frombuffer(raw, dtype=self.positions.dtype).reshape(shape)[:stop - start]
        data = self._direct_chunk(self.legal_moves, modes[1], start)
        if data is None:
            flat = _nonzero(np.ascontiguousarray(self.legal_moves[start:stop], dtype=np.uint8).reshape(-1))
        else:
            size = self.chunk_rows * MOVE_INDICES
            raw, adler = self._inflate(data, size, "legal_moves", start, checksum=False) if modes[1] else \
                (data, None)
            masks = np.frombuffer(raw, dtype=np.uint8)
            flat = _nonzero(masks)
            if adler is not None and _adler32(size, flat, masks[flat]) != adler:
                raise ValueError(f"{self.path}: the chunk at row {start} of 'legal_moves' does not inflate "
                                 "(incorrect data check)")
            flat = flat[flat < (stop - start) * MOVE_INDICES]
        _check_rows(self.path, start, planes, self.castling_stored[start:stop], self.en_passant_stored[start:stop])
        return _decode(planes.astype(np.int8, copy=False), flat, self.castling[start:stop],
                       self.en_passant[start:stop], None if self.ply is None else self.ply[start:stop])


class _ChunkCache:
    """Decoded chunks of one process, in one set of arrays, so that a batch's rows are gathered
    with one fancy index whatever chunks they fall in. It fills as rows are asked for; when all
    its slots are taken it empties and fills again. A random order over more rows than it holds
    decodes a chunk for almost every row: use BlockShuffleSampler there."""

    def __init__(self, reader, cache_bytes):
        self.reader, r = reader, reader.chunk_rows
        self.slots = int(max(4, min(reader.chunks, cache_bytes // (r * CACHED_ROW_BYTES))))
        n = self.slots * r
        self.pool = _Rows(np.empty((n, 64), np.int8), np.empty(n, np.int8), np.empty(n, np.uint8),
                          np.empty(n, np.int8), None, np.empty(n * 40, np.int16), np.zeros(n, np.int64),
                          np.zeros(n, np.int32))
        self.slot_of = np.full(reader.chunks, -1, dtype=np.int64)
        self.cached, self.moves_used = [], 0

    def clear(self):
        self.slot_of[self.cached] = -1
        self.cached, self.moves_used = [], 0

    def put(self, c, rows):
        p, base, n = self.pool, len(self.cached) * self.reader.chunk_rows, len(rows)
        if self.moves_used + len(rows.moves) > len(p.moves):
            p.moves = np.resize(p.moves, 2 * (self.moves_used + len(rows.moves)))
        p.squares[base:base + n], p.side[base:base + n] = rows.squares, rows.side
        p.castling[base:base + n], p.en_passant[base:base + n] = rows.castling, rows.en_passant
        p.moves[self.moves_used:self.moves_used + len(rows.moves)] = rows.moves
        p.starts[base:base + n], p.counts[base:base + n] = rows.starts + self.moves_used, rows.counts
        self.moves_used += len(rows.moves)
        self.slot_of[c] = len(self.cached)
        self.cached.append(c)

    def take(self, file_rows):
        """Compact rows of the file's rows (at most `slots` of them)."""
        r = self.reader.chunk_rows
        chunks = file_rows // r
        missing = np.unique(chunks[self.slot_of[chunks] < 0])
        if len(self.cached) + len(missing) > self.slots:
            self.clear()
            missing = np.unique(chunks)
        for c in missing.tolist():
            self.put(c, self.reader.chunk(c))
        return self.pool.take(self.slot_of[chunks] * r + file_rows % r)


class _SharedChunks:
    """The decoded chunks of a whole file in memory shared by the processes that read one
    ``Dataset``: the main process and the DataLoader workers it forks. A chunk is decoded once,
    by the first process that asks for it, and read by all the others; with a cache per process,
    each worker of a ``shuffle=True`` DataLoader decoded the whole file itself (twice the
    decoding with 2 workers: docs/benchmarks.md, issue 33).

    The memory is an anonymous file (memfd, which no other program can open) mapped before the
    workers fork. Its POSIX record locks order the processes: byte 0 guards the chunk states,
    and byte 1 + c is held by the process decoding chunk c for as long as it does (the kernel
    lets go of it when that process dies, so a live holder is told from a dead one). A chunk's
    state goes EMPTY -> CLAIMED (under byte 0, its byte taken) -> READY (its rows written
    first, then the state set under byte 0) or back to EMPTY when decoding it fails (a bad
    chunk: every process that asks for it decodes it and raises the same error). A process
    reads a chunk's rows only after it has seen it READY under byte 0's lock: never a
    half-written chunk, and rows decoded and checked as it would have decoded them. The legal
    moves of all chunks share one heap; a chunk whose moves do not fit what is left of it is
    OVERFLOW, which each process then caches itself."""

    EMPTY, CLAIMED, READY, OVERFLOW = 0, 1, 2, 3
    CLAIM = 4  # chunks a process claims at once

    @staticmethod
    def create(f, cache_bytes):
        """The shared chunks of the open file `f`, or None when its compact rows do not fit
        `cache_bytes` (each process then keeps a ``_ChunkCache``) or the system has no memfd."""
        rows = len(f["positions"])
        chunk_rows = _chunking(f["positions"], f["legal_moves"])[1]
        if -(-rows // chunk_rows) * chunk_rows * CACHED_ROW_BYTES > cache_bytes or fcntl is None or \
                not hasattr(os, "memfd_create"):
            return None
        try:
            return _SharedChunks(rows, chunk_rows, cache_bytes)
        except OSError:  # memfd_create or mmap refused (a sandbox, no memory): a cache per process
            return None

    def __init__(self, rows, chunk_rows, cache_bytes):
        self.rows, self.chunk_rows = rows, chunk_rows
        self.chunks = -(-rows // chunk_rows)
        n = self.chunks * chunk_rows
        fields = [("used", np.int64, 1), ("starts", np.int64, n), ("counts", np.int32, n),
                  ("state", np.int8, self.chunks), ("squares", np.int8, n * 64), ("side", np.int8, n),
                  ("castling", np.uint8, n), ("en_passant", np.int8, n)]
        at, offsets = 0, []
        for _, dtype, count in fields:
            offsets.append(at)
            at += -(-count * np.dtype(dtype).itemsize // 8) * 8
        heap = max(0, cache_bytes - at) // 2  # pages are only taken as they are written
        self.fd = os.memfd_create("legalnet-chunks", os.MFD_CLOEXEC)
        weakref.finalize(self, os.close, self.fd)
        os.ftruncate(self.fd, at + 2 * heap)
        self.map = mmap.mmap(self.fd, at + 2 * heap)  # MAP_SHARED: forked workers see the same pages
        for (name, dtype, count), offset in zip(fields, offsets):
            setattr(self, name, np.frombuffer(self.map, dtype, count, offset))
        self.squares = self.squares.reshape(n, 64)
        self.heap = np.frombuffer(self.map, np.int16, heap, at)

    def lock(self, byte, wait=True):
        """Takes the lock of `byte` (True), or returns False when another process holds it and
        not `wait`."""
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte)
            return True
        except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: held
            if wait:
                raise
            return False

    def unlock(self, byte):
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, byte)

    @contextlib.contextmanager
    def states(self):
        """Byte 0's lock, held while the chunk states are looked at or changed."""
        self.lock(0)
        try:
            yield self.state
        finally:
            self.unlock(0)


class _SharedChunkCache:
    """One process's use of ``_SharedChunks``: ``take`` as ``_ChunkCache``'s, decoding the
    chunks no process has decoded yet with this process's reader."""

    def __init__(self, reader, shared, cache_bytes):
        self.reader, self.shared, self.cache_bytes = reader, shared, cache_bytes
        self.slots = shared.chunks
        self.pool = _Rows(shared.squares, shared.side, shared.castling, shared.en_passant, None, shared.heap,
                          shared.starts, shared.counts)
        self.overflow = None  # a _ChunkCache of this process, for the chunks whose moves overflowed the heap
        self.mutex = threading.Lock()  # POSIX locks do not keep apart the threads of one process

    def take(self, file_rows):
        """Compact rows of the file's rows."""
        s = self.shared
        with self.mutex:
            self._ensure(np.unique(file_rows // self.reader.chunk_rows))
            over = s.state[file_rows // self.reader.chunk_rows] == s.OVERFLOW  # final once seen
            if not over.any():
                return self.pool.take(file_rows)
            if self.overflow is None:
                self.overflow = _ChunkCache(self.reader, self.cache_bytes)
            here, there = np.flatnonzero(~over), np.flatnonzero(over)
            rows = _Rows.concat([self.pool.take(file_rows[here]), self.overflow.take(file_rows[there])])
            return rows.take(np.argsort(np.concatenate([here, there]), kind="stable"))

    def _ensure(self, chunks):
        """Makes each of `chunks` READY or OVERFLOW: claims and decodes, a few at a time, those
        that no process has claimed (or whose claimant died), and waits for the others. A few at
        a time, so that two workers that need many of the same chunks (their first batches of a
        shuffled order) share them out instead of one decoding while the other waits for it."""
        s = self.shared
        while True:
            with s.states() as state:
                now = state[chunks]
                keep = (now == s.EMPTY) | (now == s.CLAIMED)
                chunks, now = chunks[keep], now[keep]
                # A chunk's byte is free unless a live process decodes it (or waits for it a moment):
                # a CLAIMED chunk whose byte is free lost its claimant, and is taken over.
                mine = []
                for c in itertools.chain(chunks[now == s.EMPTY].tolist(), chunks[now == s.CLAIMED].tolist()):
                    if len(mine) == s.CLAIM:
                        break
                    if s.lock(1 + c, wait=False):
                        mine.append(c)
                state[mine] = s.CLAIMED
            if not len(chunks):
                return
            if not mine:  # all being decoded by others: wait until one is done
                s.lock(1 + int(chunks[0]))
                s.unlock(1 + int(chunks[0]))
                continue
            done = 0
            try:
                for c in mine:
                    self._publish(c, self.reader.chunk(c))
                    done += 1
            except BaseException:  # the chunks not decoded go back to EMPTY, for whoever asks next
                with s.states() as state:
                    for c in mine[done:]:
                        if state[c] == s.CLAIMED:
                            state[c] = s.EMPTY
                for c in mine[done:]:
                    s.unlock(1 + c)
                raise

    def _publish(self, c, rows):
        """Writes chunk `c`'s decoded rows and sets it READY (OVERFLOW when its moves do not
        fit the heap), then lets go of its byte."""
        s, n, m = self.shared, len(rows), len(rows.moves)
        with s.states() as state:
            at = int(s.used[0])
            fits = at + m <= len(s.heap)
            if fits:
                s.used[0] = at + m
            else:
                state[c] = s.OVERFLOW
        if fits:
            base = c * self.reader.chunk_rows
            s.squares[base:base + n], s.side[base:base + n] = rows.squares, rows.side
            s.castling[base:base + n], s.en_passant[base:base + n] = rows.castling, rows.en_passant
            s.heap[at:at + m] = rows.moves
            s.starts[base:base + n], s.counts[base:base + n] = rows.starts + at, rows.counts
            with s.states() as state:
                state[c] = s.READY
        s.unlock(1 + c)


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
