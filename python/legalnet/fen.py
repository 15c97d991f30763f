"""Positions as the datasets hold them: 64 signed piece codes (+type white, -type black; pawn 1
.. king 6; square = rank * 8 + file), the side to move (+1 / -1), castling rights (bits 1 K,
2 Q, 4 k, 8 q) and the en-passant square (-1 for none), set only when an en-passant capture is
legal there (the FEN convention of python-chess and Stockfish, and the dataset's column)."""
from dataclasses import dataclass

import numpy as np

from .attacks import attack_planes
from .squares import parse_square, square_name
from .untrusted import quoted

PIECES = "pnbrqk"
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
CASTLING_BITS = {"K": 1, "Q": 2, "k": 4, "q": 8}


@dataclass
class BoardState:
    squares: np.ndarray  # int8 [64]
    side: int            # +1 white to move, -1 black
    castling: int        # bits 1 K, 2 Q, 4 k, 8 q
    en_passant: int      # square, or -1


# Castling bit -> (king square, rook square, signed king code, signed rook code), as
# lib/chess/position.cpp checks a right: the king and that rook on their first squares.
_CASTLING_PIECES = {1: (4, 7, 6, 4), 2: (4, 0, 6, 4), 4: (60, 63, -6, -4), 8: (60, 56, -6, -4)}


_KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_KING_STEPS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))


# The board inside a border 7 squares wide of a value that is no piece and not empty: a ray
# or a jump from any square stays in the array, and a ray stops at the edge.
_PAD, _WIDE = 7, 22
_INNER = np.array([(r + _PAD) * _WIDE + f + _PAD for r in range(8) for f in range(8)])


def _king_attacked(squares, side):
    """Whether the side to move attacks the other side's king, row by row (rows without that
    king: False). Only the king's square is looked at: attack_planes' whole-board planes cost
    more than the rest of reading a chunk."""
    n = len(squares)
    board = np.full((n, _WIDE * _WIDE), 100, dtype=np.int8)
    board[:, _INNER] = squares * side[:, None]  # the attackers > 0
    board = board.reshape(-1)
    kings = squares == -6 * side[:, None]
    king = _INNER[np.argmax(kings, axis=1)] + np.arange(n) * _WIDE * _WIDE

    def at(df, dr):
        return board[king + dr * _WIDE + df]

    hit = (at(-1, -side) == 1) | (at(1, -side) == 1)  # a pawn one rank behind the king, from its side
    for df, dr in _KNIGHT_STEPS:
        hit |= at(df, dr) == 2
    for df, dr in _KING_STEPS:
        hit |= at(df, dr) == 6
        sliders = (3, 5) if df and dr else (4, 5)
        open_ = np.ones(n, dtype=bool)
        for k in range(1, 8):
            piece = at(k * df, k * dr)
            hit |= open_ & ((piece == sliders[0]) | (piece == sliders[1]))
            open_ &= piece == 0
            if not open_.any():
                break
    return hit & kings.any(1)


def position_errors(squares, side, castling, en_passant):
    """The first of a batch's positions that lib/chess/position.cpp's FEN parser refuses, as
    ``(row, message)``, or None: one king a side, no pawn on the first or last rank, material a
    game can reach (at most 8 pawns, no more promoted pieces than missing pawns), castling
    rights with the king and rook on their squares, an en-passant square behind a pawn that has
    just made a double push, the side not to move not in check. squares int8 [B, 64], side [B]
    (+1 / -1), castling [B] (0..15), en_passant [B] (-1..63). The messages are the C++ ones."""
    squares = np.asarray(squares, dtype=np.int8).reshape(-1, 64)
    side = np.asarray(side, dtype=np.int8).reshape(-1)
    castling = np.asarray(castling, dtype=np.int64).reshape(-1)
    en_passant = np.asarray(en_passant, dtype=np.int64).reshape(-1)
    n = len(squares)
    rows = np.arange(n)
    white_kings, black_kings = (squares == 6).sum(1), (squares == -6).sum(1)
    pawns = (np.abs(squares[:, :8]) == 1).any(1) | (np.abs(squares[:, 56:]) == 1).any(1)
    checks = [
        (white_kings != 1, lambda r: f"FEN field 1: {white_kings[r]} white kings, expected exactly one"),
        (black_kings != 1, lambda r: f"FEN field 1: {black_kings[r]} black kings, expected exactly one"),
        (pawns, lambda r: "FEN field 1: pawn on the first or last rank"),
    ]
    # Material a game can reach: every piece beyond a side's first queen, two rooks, two bishops
    # and two knights was a pawn (it also bounds the C++ move list, lib/chess/movegen.h).
    for sign, name in ((1, "white"), (-1, "black")):
        count = [(squares == sign * code).sum(1) for code in range(1, 6)]  # pawns .. queens
        promoted = sum(np.maximum(count[code - 1] - start, 0) for code, start in ((2, 2), (3, 2), (4, 2), (5, 1)))
        checks.append((count[0] > 8, lambda r, count=count, name=name:
                       f"FEN field 1: {count[0][r]} {name} pawns, more than 8"))
        checks.append((promoted > 8 - count[0], lambda r, count=count, promoted=promoted, name=name:
                       f"FEN field 1: {name} has {promoted[r]} promoted pieces and {count[0][r]} pawns: "
                       "more than its 8 pawns could become"))
    for bit, letter in zip((1, 2, 4, 8), "KQkq"):
        king, rook, king_code, rook_code = _CASTLING_PIECES[bit]
        wrong = ((castling & bit) != 0) & ((squares[:, king] != king_code) | (squares[:, rook] != rook_code))
        checks.append((wrong, lambda r, letter=letter:
                       f"FEN field 3: castling right '{letter}' but the king or rook is not on its square"))
    ep = np.clip(en_passant, 0, 63)
    has_ep = en_passant >= 0
    pushed, origin = np.clip(ep - 8 * side, 0, 63), np.clip(ep + 8 * side, 0, 63)
    follows = (ep // 8 == np.where(side > 0, 5, 2)) & (squares[rows, ep] == 0) & (squares[rows, origin] == 0) & \
        (squares[rows, pushed] == -side)
    checks.append((has_ep & ~follows, lambda r: f"FEN field 4: en-passant square {square_name(int(ep[r]))} "
                   "does not follow a double pawn push"))
    checks.append((_king_attacked(squares, side), lambda r: "FEN field 1: the side not to move is in check"))
    bad = np.zeros(n, dtype=bool)
    for mask, _ in checks:
        bad |= mask
    if not bad.any():
        return None
    r = int(np.flatnonzero(bad)[0])
    return r, next(message(r) for mask, message in checks if mask[r])


def _counter(text, field, name):
    if not 0 < len(text) <= 6 or any(c not in "0123456789" for c in text):
        raise ValueError(f"FEN field {field}: {name} {quoted(text)} is not a number")
    return int(text)


def parse_fen(fen):
    """A BoardState from a FEN ("startpos" allowed). Raises ValueError naming the field at fault
    for every FEN the C++ parser (lib/chess/position.cpp) refuses."""
    if not isinstance(fen, str):
        raise ValueError(f"FEN: {type(fen).__name__} {fen!r:.60}, not a string")
    if fen == "startpos":
        fen = START_FEN
    fields = fen.split()
    if not 4 <= len(fields) <= 6:
        raise ValueError(f"FEN {quoted(fen, 100)}: {len(fields)} fields, expected 6 (or 4 without counters)")
    ranks = fields[0].split("/")
    if len(ranks) != 8:
        raise ValueError(f"FEN field 1: {len(ranks)} ranks, expected 8")
    squares = np.zeros(64, dtype=np.int8)
    for r, text in enumerate(ranks):
        rank, file = 7 - r, 0
        for c in text:
            if c in "12345678":
                file += int(c)
                if file > 8:
                    raise ValueError(f"FEN field 1: rank {rank + 1} is longer than 8 squares")
            elif c.lower() in PIECES and c.isascii():
                if file > 7:
                    raise ValueError(f"FEN field 1: rank {rank + 1} is longer than 8 squares")
                code = PIECES.index(c.lower()) + 1
                squares[rank * 8 + file] = code if c.isupper() else -code
                file += 1
            else:
                raise ValueError(f"FEN field 1: {quoted(c)} is not a piece")
        if file != 8:
            raise ValueError(f"FEN field 1: rank {rank + 1} has {file} squares, expected 8")
    if fields[1] not in ("w", "b"):
        raise ValueError(f"FEN field 2: {quoted(fields[1], 40)}, expected w or b")
    side = 1 if fields[1] == "w" else -1
    castling = 0
    if fields[2] != "-":
        for c in fields[2]:
            if c not in CASTLING_BITS:
                if c.isascii() and c.lower() in "abcdefgh":
                    raise ValueError(f"FEN field 3: castling letter {quoted(c)} is Chess960's (Shredder-FEN), "
                                     "not standard chess")
                raise ValueError(f"FEN field 3: {quoted(c)} is not a castling right (KQkq)")
            if castling & CASTLING_BITS[c]:
                raise ValueError(f"FEN field 3: castling letter {quoted(c)} repeated")
            castling |= CASTLING_BITS[c]
    target = -1
    if fields[3] != "-":
        try:
            target = parse_square(fields[3])
        except ValueError:
            raise ValueError(f"FEN field 4: en-passant square {quoted(fields[3], 40)} is not a square") from None
    if len(fields) > 4:
        _counter(fields[4], 5, "halfmove clock")
    if len(fields) > 5:
        _counter(fields[5], 6, "fullmove number")
    error = position_errors(squares[None], [side], [castling], [target])
    if error:
        raise ValueError(error[1])
    en_passant = target if target >= 0 and _en_passant_is_legal(squares, side, target) else -1
    return BoardState(squares, side, castling, en_passant)


def _en_passant_is_legal(squares, side, target):
    """Whether a pawn of the side to move can capture en passant on `target` without leaving
    its king in check (the FEN's field is written only then, as python-chess does)."""
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
