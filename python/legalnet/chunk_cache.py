"""The caches of decoded chunks that ``Dataset`` reads rows from: ``_ChunkCache``, one process's;
``_SharedChunks``, a whole file's compact rows in memory shared by the process that made a
Dataset and the DataLoader workers it forks; ``_SharedChunkCache``, one process's use of it."""
import contextlib
import itertools
import mmap
import os
import threading
import weakref

try:
    import fcntl
except ImportError:  # not a POSIX system: a cache per process
    fcntl = None

import numpy as np

from .dataset_format import _chunking
from .rows import _Rows

# The rows decoded at once (whole chunks, at least one): the checks of a chunk cost numpy a few
# hundred calls whatever its rows, paid once for a group of them.
DECODED_ROWS = 2048


def _group_chunks(chunk_rows):
    """How many chunks of `chunk_rows` rows a reader decodes at once."""
    return max(1, DECODED_ROWS // chunk_rows)


# What a cached row costs: its fixed fields plus room for 40 legal moves (random games average
# about 30); the moves' array grows when a file needs more.
CACHED_ROW_BYTES = 64 + 3 + 8 + 4 + 2 * 40


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
        group = _group_chunks(r)
        for i in range(0, len(missing), group):
            for c, rows in zip(missing[i:i + group].tolist(), self.reader.decode_chunks(missing[i:i + group])):
                self.put(c, rows)
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
        """Makes each of `chunks` READY or OVERFLOW: claims and decodes, a few at a time
        (_group_chunks), those that no process has claimed (or whose claimant died), and waits
        for the others. A few at a time, so that two workers that need many of the same chunks
        (their first batches of a shuffled order) share them out instead of one decoding while
        the other waits for it."""
        s, claim = self.shared, _group_chunks(self.reader.chunk_rows)  # chunks claimed and decoded at once
        while True:
            with s.states() as state:
                now = state[chunks]
                keep = (now == s.EMPTY) | (now == s.CLAIMED)
                chunks, now = chunks[keep], now[keep]
                # A chunk's byte is free unless a live process decodes it (or waits for it a moment):
                # a CLAIMED chunk whose byte is free lost its claimant, and is taken over.
                mine = []
                for c in itertools.chain(chunks[now == s.EMPTY].tolist(), chunks[now == s.CLAIMED].tolist()):
                    if len(mine) == claim:
                        break
                    if s.lock(1 + c, wait=False):
                        mine.append(c)
                mine.sort()  # the order the reader decodes them in
                state[mine] = s.CLAIMED
            if not len(chunks):
                return
            if not mine:  # all being decoded by others: wait until one is done
                s.lock(1 + int(chunks[0]))
                s.unlock(1 + int(chunks[0]))
                continue
            done = 0
            try:
                for c, rows in zip(mine, self.reader.decode_chunks(mine)):
                    self._publish(c, rows)
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
