"""Rows of a dataset in compact form (board codes, side, castling, en passant and the list of
legal-move indices, about 140 bytes a row) and the one decoder of a file's chunks into them,
with the checks the C++ readers make (lib/data/row_block.cpp); the network's inputs and targets
are built from compact rows a batch at a time, with numpy.

Chunks stored as tensorize and h5py store them (deflate, with or without shuffle, which is the
identity for one-byte values) are read with HDF5's direct chunk read and inflated by Python's
zlib, which lets other threads run meanwhile; any other storage goes through HDF5's own
filters."""
import os
import zlib

import numpy as np
import torch

from .dataset_format import _check_identity, _chunking, _identity, _open
from .fen import position_errors
from .inputs import encode_batch, input_kind
from .moves import FLIP_RANKS, MOVE_INDICES

PIECE_TYPES = np.arange(1, 7, dtype=np.int8).reshape(1, 6, 1)


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
        x = _tensor((n, input_kind(inputs).planes, 8, 8), shared)
        encode_batch(inputs, self.squares, self.side, self.castling, self.en_passant, out=x.numpy())
        # torch.zeros: half the time of zeroing fresh pages with numpy (docs/benchmarks.md).
        y = _tensor((n, MOVE_INDICES), shared) if shared else torch.zeros((n, MOVE_INDICES))
        targets = y.numpy().reshape(-1)
        if shared:
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


def _check_rows(path, file_rows, planes, castling, en_passant):
    """ValueError "<file>: row <r>: ..." for the first row the C++ readers refuse
    (lib/data/row_block.cpp; r from ``file_rows``, the rows' numbers in the file): a plane
    value other than -1, 0 or +1, castling out of 0..15, en_passant out of -1..63, two pieces on
    a square, or a position the FEN parser refuses (kings, pawns, castling rights, en passant,
    the side not to move in check)."""
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
    raise ValueError(f"{path}: row {int(file_rows[r])}: {what}")


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

    def _read(self, c):
        """Chunk `c`'s planes [n, 7, 8, 8] (as stored: checked before they are narrowed) and the offsets (row * 4096 + move index) of the
        nonzero bytes of its masks, inflated but not yet checked."""
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
        return planes, flat

    def decode_chunks(self, cs):
        """The compact rows of each of the chunks `cs` (in ascending order), checked and decoded
        together: the checks cost numpy a few hundred calls whatever the rows, which for one
        chunk of 256 rows were a third of a shuffled epoch's time (docs/benchmarks.md)."""
        cs = [int(c) for c in cs]
        planes, flats, bounds, at = [], [], [0], 0
        for c in cs:
            p, flat = self._read(c)
            planes.append(p)
            flats.append(flat + at * MOVE_INDICES)
            at += len(p)
            bounds.append(at)
        file_rows = np.concatenate([np.arange(c * self.chunk_rows, c * self.chunk_rows + bounds[k + 1] - bounds[k])
                                    for k, c in enumerate(cs)]) if cs else np.zeros(0, np.int64)
        planes = np.concatenate(planes) if cs else np.zeros((0, 7, 8, 8), np.int8)
        _check_rows(self.path, file_rows, planes, self.castling_stored[file_rows], self.en_passant_stored[file_rows])
        rows = _decode(planes.astype(np.int8, copy=False), np.concatenate(flats) if cs else np.zeros(0, np.int64), self.castling[file_rows],
                       self.en_passant[file_rows], None if self.ply is None else self.ply[file_rows])
        if len(cs) == 1:
            return [rows]
        return [rows.take(np.arange(bounds[k], bounds[k + 1])) for k in range(len(cs))]

    def chunk(self, c):
        return self.decode_chunks([c])[0]


