"""What a network sees, vectorised over a batch with numpy: the same table and planes as
lib/encode/inputs.h, so that a model trained by the C++ tools gets the same bytes here.

Kinds:
- ``planes``: the predecessor's 7 planes (side to move, then pawn..king, +1 white / -1 black);
- ``attacks``: planes + 3 planes computed by the rules (attacks.py); engine-assisted;
- ``state``: the whole position from the mover's side (ranks flipped when black moves), nothing
  derived: 0-5 the mover's pawn..king, 6-11 the opponent's, 12-15 castling rights as constant
  planes (mover O-O, O-O-O, opponent O-O, O-O-O), 16 the legal en-passant target, 17 all ones;
- ``state+attacks``: state + the 3 attack planes in the mover's frame; engine-assisted.
"""
from collections import namedtuple

import numpy as np

from .attacks import attack_planes
from .fen import parse_fen

InputKind = namedtuple("InputKind", "name planes mover_frame from_move_generator")
INPUT_KINDS = {k.name: k for k in (
    InputKind("planes", 7, False, False),
    InputKind("attacks", 10, False, True),
    InputKind("state", 18, True, False),
    InputKind("state+attacks", 21, True, True),
)}

FLIP_SQUARES = np.arange(64) ^ 56

# What a net sees when nothing says otherwise: nn::ModelConfig's default and train --inputs'.
DEFAULT_INPUT_KIND = "state"


def config_input_kind(config):
    """The input kind a model config names: ``input_kind``; ``inputs`` in files written before the
    name was made one; the predecessor's planes in files older still (as ModelConfig::from_json)."""
    return config.get("input_kind", config.get("inputs", "planes"))


def input_kind(name):
    if name not in INPUT_KINDS:
        raise ValueError(f"unknown inputs {name!r} (expected {' | '.join(INPUT_KINDS)})")
    return INPUT_KINDS[name]


def squares_from_planes(positions):
    """Signed piece codes [B, 64] and sides [B] from the dataset's planes [B, 7, 8, 8]."""
    positions = np.asarray(positions, dtype=np.int8)
    types = np.arange(7, dtype=np.int8).reshape(1, 7, 1)
    squares = (positions.reshape(-1, 7, 64)[:, 1:] * types[:, 1:]).sum(1).astype(np.int8)
    side = np.where(positions[:, 0, 0, 0] > 0, 1, -1).astype(np.int8)
    return squares, side


def encode_batch(inputs, squares, side, castling, en_passant, out=None):
    """Network inputs float32 [B, C, 8, 8] of a batch of positions: squares int8 [B, 64], side
    [B] (+1 / -1), castling [B] (bits 1 K, 2 Q, 4 k, 8 q), en_passant [B] (square or -1). Written
    into ``out`` (float32, B * C * 64 values) when given, which is returned."""
    kind = input_kind(inputs)
    squares = np.asarray(squares, dtype=np.int8).reshape(-1, 64)
    side = np.asarray(side, dtype=np.int8).reshape(-1)
    castling = np.asarray(castling, dtype=np.int64).reshape(-1)
    en_passant = np.asarray(en_passant, dtype=np.int64).reshape(-1)
    n = squares.shape[0]
    if out is None:
        out = np.zeros((n, kind.planes, 64), dtype=np.float32)
    else:
        out = out.reshape(n, kind.planes, 64)
        out[...] = 0
    if not kind.mover_frame:
        out[:, 0] = side[:, None]
        for t in range(1, 7):
            out[:, t] = np.where(np.abs(squares) == t, np.sign(squares), 0)
        if kind.from_move_generator:
            out[:, 7:10] = attack_planes(squares, side).reshape(n, 3, 64)
        return out.reshape(n, kind.planes, 8, 8)
    black = side < 0
    mover = np.where(black[:, None], squares[:, FLIP_SQUARES], squares) * side[:, None]  # ours > 0
    for t in range(6):
        out[:, t] = mover == t + 1
        out[:, 6 + t] = mover == -(t + 1)
    # Rights in the mover's terms: white moves K Q k q = bits 1 2 4 8; black moves k q K Q.
    for plane, (white_bit, black_bit) in enumerate(((1, 4), (2, 8), (4, 1), (8, 2))):
        out[:, 12 + plane] = (np.where(black, castling & black_bit, castling & white_bit) != 0)[:, None]
    has_ep = en_passant >= 0
    ep = np.where(black, en_passant ^ 56, en_passant)
    out[np.flatnonzero(has_ep), 16, ep[has_ep]] = 1
    out[:, 17] = 1
    if kind.from_move_generator:
        attacks = attack_planes(squares, side).reshape(n, 3, 64)
        out[:, 18:21] = np.where(black[:, None, None], attacks[:, :, FLIP_SQUARES], attacks)
    return out.reshape(n, kind.planes, 8, 8)


def encode_targets(inputs, legal_masks, side):
    """The 0/1 targets float32 [B, 4096] of the dataset's legal-move masks [B, 4096], in the
    network's frame (flipped for black to move when the inputs are in the mover's frame)."""
    masks = np.asarray(legal_masks)
    out = masks.astype(np.float32)
    if input_kind(inputs).mover_frame:
        black = np.flatnonzero(np.asarray(side).reshape(-1) < 0)
        # Index from*64 + to, squares rank*8 + file: flipping both ranks reverses two axes.
        out[black] = masks[black].reshape(-1, 8, 8, 8, 8)[:, ::-1, :, ::-1, :].reshape(-1, 4096)
    return out


def encode_fen(fen, inputs=DEFAULT_INPUT_KIND):
    """The inputs float32 [C, 8, 8] of one FEN ("startpos" allowed)."""
    s = parse_fen(fen)
    return encode_batch(inputs, s.squares[None], [s.side], [s.castling], [s.en_passant])[0]
