"""Positions as the datasets hold them: 64 signed piece codes (+type white, -type black; pawn 1
.. king 6; square = rank * 8 + file), the side to move (+1 / -1), castling rights (bits 1 K,
2 Q, 4 k, 8 q) and the en-passant square (-1 for none), set only when an en-passant capture is
legal there (the FEN convention of python-chess and Stockfish, and the dataset's column)."""
from dataclasses import dataclass

import numpy as np

from .moves import parse_square

PIECES = "pnbrqk"
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
CASTLING_BITS = {"K": 1, "Q": 2, "k": 4, "q": 8}


@dataclass
class BoardState:
    squares: np.ndarray  # int8 [64]
    side: int            # +1 white to move, -1 black
    castling: int        # bits 1 K, 2 Q, 4 k, 8 q
    en_passant: int      # square, or -1


def parse_fen(fen):
    """A BoardState from a FEN ("startpos" allowed). Raises ValueError naming the field at fault."""
    if fen == "startpos":
        fen = START_FEN
    fields = fen.split()
    if len(fields) < 4:
        raise ValueError(f"FEN {fen!r}: {len(fields)} fields, expected at least 4")
    ranks = fields[0].split("/")
    if len(ranks) != 8:
        raise ValueError(f"FEN field 1: {len(ranks)} ranks, expected 8")
    squares = np.zeros(64, dtype=np.int8)
    for r, text in enumerate(ranks):
        rank, file = 7 - r, 0
        for c in text:
            if c.isdigit():
                file += int(c)
            elif c.lower() in PIECES:
                if file > 7:
                    raise ValueError(f"FEN field 1: rank {rank + 1} is longer than 8 squares")
                code = PIECES.index(c.lower()) + 1
                squares[rank * 8 + file] = code if c.isupper() else -code
                file += 1
            else:
                raise ValueError(f"FEN field 1: {c!r} is not a piece")
        if file != 8:
            raise ValueError(f"FEN field 1: rank {rank + 1} has {file} squares, expected 8")
    if fields[1] not in ("w", "b"):
        raise ValueError(f"FEN field 2: {fields[1]!r}, expected w or b")
    side = 1 if fields[1] == "w" else -1
    castling = 0
    if fields[2] != "-":
        for c in fields[2]:
            if c not in CASTLING_BITS:
                raise ValueError(f"FEN field 3: {c!r} is not a castling right (KQkq)")
            castling |= CASTLING_BITS[c]
    en_passant = -1
    if fields[3] != "-":
        target = parse_square(fields[3])
        if _en_passant_is_legal(squares, side, target):
            en_passant = target
    return BoardState(squares, side, castling, en_passant)


def _en_passant_is_legal(squares, side, target):
    """Whether a pawn of the side to move can capture en passant on `target` without leaving
    its king in check (the FEN's field is written only then, as python-chess does)."""
    from .attacks import attack_planes  # the squares the opponent attacks
    if target // 8 != (5 if side > 0 else 2):
        return False
    captured = target - 8 * side
    if squares[captured] != -side or squares[target] != 0:
        return False
    for df in (-1, 1):
        if not 0 <= target % 8 + df < 8:
            continue
        frm = captured + df
        if squares[frm] != side:
            continue
        after = squares.copy()
        after[frm], after[captured], after[target] = 0, 0, side
        kings = np.flatnonzero(after == 6 * side)
        attacked = attack_planes(after[None], np.array([side], dtype=np.int8))[0, 0].reshape(64)
        if len(kings) == 0 or not attacked[kings[0]]:
            return True
    return False
