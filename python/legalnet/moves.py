"""The move index: ``from_square * 64 + to_square`` (a1 = 0, h8 = 63). The four promotions of a
pawn move share its index (the queen promotion stands for them); castling is the king's move
(e1g1 = 262). Only the 1792 queen-line and knight-jump indices can ever be legal. Networks whose
inputs are in the mover's frame (``state`` inputs) index moves in that frame: both squares' ranks
flipped when black moves. Mirrors lib/encode/encode.h and lib/encode/inputs.h."""
import numpy as np

from .fen import parse_fen
from .squares import DIRECTIONS, KNIGHT_JUMPS, parse_square, square_name  # noqa: F401 (moves' API)

MOVE_INDICES = 4096

# from ^ 56, to ^ 56: the same move seen from the other side of the board.
FLIP_RANKS = (56 << 6) | 56
FLIPPED = np.arange(MOVE_INDICES) ^ FLIP_RANKS

def move_index(uci):
    """The index of a UCI move ("e2e4", "e7e8q": the promotion piece does not change it)."""
    if len(uci) not in (4, 5):
        raise ValueError(f"not a UCI move: {uci!r}")
    return parse_square(uci[:2]) * 64 + parse_square(uci[2:4])


def move_type(index):
    """0..63 for a queen-line move (direction * 7 + distance - 1) or knight jump (56..63), -1 else."""
    frm, to = divmod(int(index), 64)
    df, dr = to % 8 - frm % 8, to // 8 - frm // 8
    for d, (x, y) in enumerate(DIRECTIONS):
        for k in range(1, 8):
            if (x * k, y * k) == (df, dr):
                return d * 7 + k - 1
    for j, jump in enumerate(KNIGHT_JUMPS):
        if jump == (df, dr):
            return 56 + j
    return -1


MOVE_TYPES = np.array([move_type(i) for i in range(MOVE_INDICES)], dtype=np.int64)
GEOMETRIC = MOVE_TYPES >= 0  # the 1792 indices that can be legal


def to_board_order(values, side, mover_frame):
    """A network's outputs ``[B, 4096]`` (numpy or torch) in the inputs' frame, reordered to board
    indices: rows whose ``side`` is -1 (black to move) are flipped when ``mover_frame``."""
    if not mover_frame:
        return values
    flipped = values[:, FLIPPED]
    black = np.asarray(side) < 0
    if hasattr(values, "new_tensor"):  # torch
        import torch
        mask = torch.as_tensor(black, device=values.device).reshape(-1, 1)
        return torch.where(mask, flipped, values)
    return np.where(black.reshape(-1, 1), flipped, values)


def decode_move(index, fen):
    """The UCI move of a board index in the position ``fen``: "e2e4", "e7e8q" for a pawn reaching
    the last rank (the queen stands for the four promotions), "e1g1" for castling."""
    index = int(index)
    if not 0 <= index < MOVE_INDICES:
        raise ValueError(f"move index {index} is not in 0..4095")
    frm, to = divmod(index, 64)
    state = parse_fen(fen)
    promotion = abs(int(state.squares[frm])) == 1 and to // 8 in (0, 7)
    return square_name(frm) + square_name(to) + ("q" if promotion else "")
