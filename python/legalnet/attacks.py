"""The 3 planes that ``attacks`` inputs add, computed by the rules (lib/encode/attack_planes.h),
vectorised over a batch with numpy:

- plane 0: squares the side not to move attacks, sliders seen through the mover's king;
- plane 1: the mover's pieces pinned to its king;
- plane 2: in check, the checking pieces and the squares between a checking slider and the king.
"""
import numpy as np

from .squares import DIRECTIONS, KNIGHT_JUMPS

PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6


def _table(steps, repeat):
    """[64, len(steps), repeat] target squares (-1 off the board) of `repeat` steps each way."""
    out = np.full((64, len(steps), repeat), -1, dtype=np.int64)
    for s in range(64):
        for d, (df, dr) in enumerate(steps):
            f, r = s % 8, s // 8
            for k in range(repeat):
                f, r = f + df, r + dr
                if not (0 <= f < 8 and 0 <= r < 8):
                    break
                out[s, d, k] = r * 8 + f
    return out


RAYS = _table(DIRECTIONS, 7)                      # [64, 8 directions, 7 steps]
KNIGHT_TARGETS = _table(KNIGHT_JUMPS, 1)[:, :, 0]  # [64, 8]
KING_TARGETS = _table(DIRECTIONS, 1)[:, :, 0]      # [64, 8]
# Pawn captures: white pawns take towards rank 8, black pawns towards rank 1.
WHITE_PAWN_TARGETS = _table([(-1, 1), (1, 1)], 1)[:, :, 0]
BLACK_PAWN_TARGETS = _table([(-1, -1), (1, -1)], 1)[:, :, 0]
DIAGONAL = [d for d, (df, dr) in enumerate(DIRECTIONS) if df and dr]
STRAIGHT = [d for d, (df, dr) in enumerate(DIRECTIONS) if not (df and dr)]


def _scatter(marks, origins_alive, targets):
    """marks[b, targets[s]] |= origins_alive[b, s] for the squares s with a target on the board."""
    ok = targets >= 0
    marks[:, targets[ok]] |= origins_alive[:, ok]


def attack_planes(squares, side):
    """squares int8 [B, 64] (signed piece codes), side int8 [B] (+1 / -1) -> float32 [B, 3, 8, 8]."""
    squares = np.asarray(squares, dtype=np.int8)
    side = np.asarray(side, dtype=np.int8).reshape(-1, 1)
    n = squares.shape[0]
    rel = squares * side                      # ours > 0, theirs < 0
    ours, theirs = rel > 0, rel < 0
    their_type = np.where(theirs, -rel, 0)
    our_king = rel == KING
    has_king = our_king.any(1)
    king = our_king.argmax(1)                 # [B] (0 where there is none: masked below)
    occupied = squares != 0
    through_king = occupied & ~our_king

    attacked = np.zeros((n, 64), dtype=bool)
    for d in range(8):
        sliders = (their_type == QUEEN) | (their_type == (BISHOP if d in DIAGONAL else ROOK))
        alive = sliders.copy()
        for k in range(7):
            targets = RAYS[:, d, k]
            ok = targets >= 0
            alive &= ok[None, :]
            _scatter(attacked, alive, targets)
            blocked = np.zeros_like(alive)
            blocked[:, ok] = through_king[:, targets[ok]]
            alive &= ~blocked
    for j in range(8):
        _scatter(attacked, their_type == KNIGHT, KNIGHT_TARGETS[:, j])
        _scatter(attacked, their_type == KING, KING_TARGETS[:, j])
    # Their pawns: white's when black is to move.
    their_pawns = their_type == PAWN
    for j in range(2):
        for table, them_white in ((WHITE_PAWN_TARGETS, True), (BLACK_PAWN_TARGETS, False)):
            _scatter(attacked, their_pawns & ((side < 0) == them_white), table[:, j])

    pinned = np.zeros((n, 64), dtype=bool)
    check = np.zeros((n, 64), dtype=bool)
    rows = np.arange(n)
    for d in range(8):
        ray = RAYS[king, d]                   # [B, 7]
        on = ray >= 0
        codes = np.where(on, np.take_along_axis(rel, np.where(on, ray, 0), 1), 0)
        occ = codes != 0
        count = np.cumsum(occ, 1)
        first = np.argmax(occ, 1)
        second = np.argmax(occ & (count == 2), 1)
        has_first, has_second = occ.any(1), (count[:, -1] >= 2)
        slider = BISHOP if d in DIAGONAL else ROOK
        first_code = codes[rows, first]
        second_code = codes[rows, second]
        is_slider = lambda code: (code == -QUEEN) | (code == -slider)
        pin = has_king & has_second & (first_code > 0) & is_slider(second_code)
        pinned[rows[pin], ray[rows[pin], first[pin]]] = True
        checking = has_king & has_first & is_slider(first_code)
        for k in range(7):
            mark = checking & (k <= first) & on[:, k]
            check[rows[mark], ray[rows[mark], k]] = True
    # Knights and pawns give check from their own square.
    for j in range(8):
        target = KNIGHT_TARGETS[king, j]
        hit = has_king & (target >= 0) & (np.take_along_axis(rel, np.maximum(target, 0)[:, None], 1)[:, 0] == -KNIGHT)
        check[rows[hit], target[hit]] = True
    for j in range(2):
        # A pawn of theirs attacks our king from where our own pawn on the king's square would capture.
        target = np.where(side[:, 0] > 0, WHITE_PAWN_TARGETS[king, j], BLACK_PAWN_TARGETS[king, j])
        hit = has_king & (target >= 0) & (np.take_along_axis(rel, np.maximum(target, 0)[:, None], 1)[:, 0] == -PAWN)
        check[rows[hit], target[hit]] = True

    out = np.stack([attacked, pinned, check], 1).astype(np.float32)
    return out.reshape(n, 3, 8, 8)
