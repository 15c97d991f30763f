"""legalnet from Python: datasets as torch data, models that run, inputs encoded exactly as the
C++ tools encode them. Needs numpy, h5py, torch and safetensors only.

    import legalnet
    model = legalnet.load_model("runs/r6x32/model.safetensors")
    legalnet.score_fen(model, "startpos", top=3)   # [(UCI move, probability), ...]: legal moves near 1.0

On a small machine give torch one thread per process for inference (``torch.set_num_threads(1)``)
or export ``OMP_WAIT_POLICY=PASSIVE``: torch's spinning OpenMP threads made inference 4-20x
slower on 2 cores.
"""
import os
import signal
import sys

# `python -m legalnet` imports this package before __main__.py can catch anything, and torch
# takes seconds to load: Ctrl-C then is the same one line and status 130 (sys.argv[0] is "-m"
# while Python locates the module). A Ctrl-C inside a C extension's own import (numpy's of
# datetime) can come out as an ImportError that no longer says so, so the command line notes
# the signal itself while it imports; a program that imports the package keeps its handler.
# The `legalnet` command pip installs imports it the same way, from a script of that name.
_COMMAND_LINE = sys.argv[:1] == ["-m"] or os.path.basename(sys.argv[0] if sys.argv else "") == "legalnet"
_interrupted = []


def _note_interrupt(signum, frame):
    _interrupted.append(signum)
    raise KeyboardInterrupt


if _COMMAND_LINE and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _note_interrupt)
try:
    import numpy as np
    import torch

    from .attacks import attack_planes
    from .batch_reader import BatchReader
    from .dataset import BlockShuffleSampler, Dataset
    from .fen import BoardState, parse_fen
    from .inputs import DEFAULT_INPUT_KIND, INPUT_KINDS, encode_batch, encode_fen, encode_targets, input_kind, squares_from_planes
    from .export import export_model, export_torchscript
    from .model_file import load_model, save_model
    from .models import LegalNet
    from .moves import GEOMETRIC, decode_move, move_index, to_board_order
    from .squares import square_name as _square_name
except (KeyboardInterrupt, ImportError) as e:
    if _COMMAND_LINE and (isinstance(e, KeyboardInterrupt) or _interrupted):
        sys.stderr.write("legalnet: interrupted\n")
        os._exit(130)
    raise
finally:
    if signal.getsignal(signal.SIGINT) is _note_interrupt:
        signal.signal(signal.SIGINT, signal.default_int_handler)

from ._version import __version__
__all__ = ["BatchReader", "BlockShuffleSampler", "BoardState", "DEFAULT_INPUT_KIND", "Dataset", "GEOMETRIC", "INPUT_KINDS", "LegalNet",
           "attack_planes", "decode_move", "encode_batch", "encode_fen", "encode_targets", "export_model", "export_torchscript",
           "input_kind", "load_model", "move_index", "parse_fen", "save_model", "score_fen", "squares_from_planes",
           "to_board_order"]


def score_fen(model, fen, top=None):
    """The model's probability for every possibly-legal move of ``fen``, as (UCI move, probability)
    pairs from the most to the least likely (the first ``top`` of them when given), ordered by the
    logits, which still order the legal moves where a trained model's probabilities all print as
    1.0000; equal logits come in the order of their UCI moves. A small mlp trained on random games:

        >>> legalnet.score_fen(model, "startpos", top=3)
        [('g1h3', 0.9999964620043015), ('b1c3', 0.9999939034766607), ('b1a3', 0.9999933058728195)]
    """
    state = parse_fen(fen)
    x = encode_batch(model.inputs, state.squares[None], [state.side], [state.castling], [state.en_passant])
    device = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.from_numpy(x).to(device)).double().cpu().numpy()
    logits = to_board_order(logits, [state.side], input_kind(model.inputs).mover_frame)[0]
    # The sigmoid through exp(-|x|), which cannot overflow (1 / (1 + exp(-x)) did, with a
    # RuntimeWarning, for a large negative logit).
    small = np.exp(-np.abs(logits))
    probs = np.where(logits >= 0, 1.0, small) / (1.0 + small)
    # By the logits (large ones share a probability of 1.0), then by the move's name: the order of
    # equal scores is the position's, not the move indices'.
    order = sorted(np.flatnonzero(GEOMETRIC).tolist(),
                   key=lambda i: (-float(logits[i]), _square_name(i // 64) + _square_name(i % 64)))[:top]
    return [(decode_move(i, fen), float(probs[i])) for i in order]
