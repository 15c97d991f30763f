"""Model files as lib/nn/model_file.h writes them: safetensors (data only: reading one runs
nothing from it) with the net's tensors under torch's names and, in the metadata, ``format``
("legalnet-model 2"), ``config`` (the architecture, JSON) and ``training`` (JSON). Every size is
checked before the net is built: the header by the safetensors reader, the config against the
same caps as ModelConfig::resolved() and against the floats the file holds."""
import errno
import json
import os
import stat
import tempfile

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file

from .inputs import config_input_kind, input_kind
from .models import MODEL_SPECS, LegalNet
from .moves import GEOMETRIC
from .untrusted import load_json, printable

MODEL_FORMAT = "legalnet-model 2"
MAX_PARAMETERS = 1 << 30  # nn::MAX_PARAMETERS
_LIMITS = {"hidden": 65536, "blocks": 256, "channels": 4096, "heads": 64}  # nn::MAX_SIZES (lib/nn/model_config.h)
_OLD_FORMAT = ("a TorchScript archive (the .pt format of earlier legalnet), which can run code when loaded, so it "
               "is not read; convert it, read as data, with: python -m legalnet convert OLD.pt NEW.safetensors")


# The keys of a model file's config: (name, type, value when absent or None when required).
# lib/nn/model_config.cpp's CONFIG_KEYS is the same table; tests/testdata/model_configs.json
# feeds the same configs to both (test_model_files.py: ConfigRules). A size is an integer,
# never a bool or 1.0, in 0..65536 before its own cap below.
CONFIG_KEYS = (("kind", str, None), ("hidden", int, None), ("blocks", int, None), ("channels", int, None),
               ("heads", int, 0),  # absent before the attention model
               ("squeeze_excitation", bool, None), ("geometric_head", bool, None),
               ("mixing", str, "none"),  # absent before line mixing
               ("policy_head", str, "types"),  # absent before the pairs head
               # "inputs" before the name was made one; neither before the attack planes
               ("input_kind", str, "planes"), ("inputs", str, "planes"))
MIXINGS = ("none", "lines")  # nn::MIXINGS
POLICY_HEADS = ("types", "pairs")  # nn::POLICY_HEADS
_MAX_SIZE = 65536


def resolve_config(config):
    """ModelConfig::from_json and resolved() of lib/nn/model_config.cpp: the config with each
    unset size at its kind's default; ValueError for a missing key, a wrong type, an unknown kind
    or sizes out of range, including a net of more than MAX_PARAMETERS weights."""
    if not isinstance(config, dict):
        raise ValueError("the model config is not a JSON object")
    c = dict(config)
    for key, kind, absent in CONFIG_KEYS:
        if key not in c and absent is None:
            raise ValueError(f"the model config has no {key!r}")
        value = c.get(key, absent)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"the model config's {key!r} is not {_TYPE_NAMES[kind]}")
        if kind is int and not 0 <= value <= _MAX_SIZE:
            raise ValueError(f"the model config's {key!r} is {value}, not in 0..{_MAX_SIZE}")
    c["input_kind"] = config_input_kind(c)
    c.pop("inputs", None)
    c.setdefault("heads", 0)
    c.setdefault("mixing", "none")
    c.setdefault("policy_head", "types")
    input_kind(c["input_kind"])
    if c["kind"] not in MODEL_SPECS:
        raise ValueError(f"unknown model {printable(repr(c['kind']))} (expected {' | '.join(MODEL_SPECS)})")
    if c["mixing"] not in MIXINGS:
        raise ValueError(f"unknown mixing {printable(repr(c['mixing']))} (expected {' | '.join(MIXINGS)})")
    if c["mixing"] != "none" and c["kind"] != "resnet":
        raise ValueError(f"mixing {c['mixing']!r} is a resnet option, not {c['kind']}'s")
    if c["policy_head"] not in POLICY_HEADS:
        raise ValueError(f"unknown policy head {printable(repr(c['policy_head']))} "
                         f"(expected {' | '.join(POLICY_HEADS)})")
    if c["policy_head"] != "types" and c["kind"] != "resnet":
        raise ValueError(f"policy head {c['policy_head']!r} is a resnet option, not {c['kind']}'s")
    for key, value in MODEL_SPECS[c["kind"]].defaults.items():
        if c[key] == 0:
            c[key] = value
    if c["kind"] == "attention" and c["hidden"] == 0:
        c["hidden"] = 2 * c["channels"]
    if any(not 0 <= c[key] <= limit for key, limit in _LIMITS.items()):
        raise ValueError(f"model sizes out of range: {c}")
    if c["kind"] != "mlp" and (c["blocks"] < 1 or c["channels"] < 1):
        raise ValueError(f"a {c['kind']} needs blocks and channels >= 1")
    if c["kind"] == "attention" and c["channels"] % c["heads"] != 0:
        raise ValueError(f"attention: channels {c['channels']} must be a multiple of heads {c['heads']}")
    if min_parameters(c) > MAX_PARAMETERS:
        raise ValueError(f"model too large: {c['kind']} {c['blocks']}x{c['channels']} hidden {c['hidden']} has "
                         f"at least {min_parameters(c)} weights (at most {MAX_PARAMETERS})")
    return c


def min_parameters(c):
    """ModelConfig::min_parameters(): the net's convolutions and matrices, a lower bound on its weights."""
    inp, d, ff = input_kind(c["input_kind"]).planes, c["channels"], c["hidden"]
    moves = int(GEOMETRIC.sum()) if c["geometric_head"] else 4096
    if c["kind"] == "mlp":
        return inp * 64 * ff + ff * moves
    if c["kind"] == "conv":
        return inp * 9 * d + (c["blocks"] - 1) * 9 * d * d + d * 64 * ff + ff * moves
    if c["kind"] == "attention":
        return inp * d + c["blocks"] * (4 * d * d + 2 * d * ff) + 2 * d * d
    return inp * 9 * d + c["blocks"] * 2 * 9 * d * d + d * 64 + (2 * d * d if c["policy_head"] == "pairs" else 0)


def _is_derived_buffer(name):
    """The index heads' move maps: built from the config, compared with the file's, never loaded."""
    return name.rsplit(".", 1)[-1] in ("source", "fixed_off", "impossible")


def _open_regular(path):
    """The first bytes of ``path``, refusing what is not a regular file (a FIFO would never end)
    and the TorchScript archives of earlier versions."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: not a regular file")
        start = os.read(fd, 8)
    finally:
        os.close(fd)
    if start[:4] == b"PK\x03\x04":
        raise ValueError(f"{path}: {_OLD_FORMAT}")


def load_model(path, device="cpu"):
    """The model of a model.safetensors written by ``train`` (or save_model), in eval mode on
    ``device``; ``.inputs`` names its input kind and ``.config`` its architecture. ValueError,
    naming the file, for anything else."""
    path = str(path)
    _open_regular(path)
    try:
        with safe_open(path, framework="pt") as f:
            metadata = f.metadata() or {}
            if metadata.get("format") != MODEL_FORMAT:
                raise ValueError(f"{path}: format {metadata.get('format')!r} is not {MODEL_FORMAT!r}")
            try:
                config = resolve_config(load_json(metadata.get("config", ""), max_bytes=1 << 16))
            except ValueError as e:
                raise ValueError(f"{path}: config: {printable(str(e))}") from None
            training = metadata.get("training", "{}")
            try:  # copied into reports: JSON, bounded, as evaluate reads it
                load_json(training, max_bytes=4 << 20)
            except ValueError as e:
                raise ValueError(f"{path}: metadata 'training' is {e}") from None
            # Shapes and dtypes come from the header: nothing of the tensors is read yet.
            stored = {name: f.get_slice(name) for name in f.keys()}
            floats = sum(_elements(s.get_shape()) * _dtype_size(s.get_dtype()) for s in stored.values()) // 4
            if min_parameters(config) > floats:
                raise ValueError(f"{path}: the config asks for a {config['kind']} {config['blocks']}x"
                                 f"{config['channels']} hidden {config['hidden']} (at least {min_parameters(config)}"
                                 f" weights), the file holds {floats * 4} bytes of tensors")
            model = LegalNet(config)
            state = model.net.state_dict()
            for name in stored:
                if name not in state:
                    raise ValueError(f"{path}: tensor {name!r} is not part of the architecture {config['kind']}")
            loaded = {}
            for name, want in state.items():
                if name not in stored:
                    raise ValueError(f"{path}: no tensor {name!r}, which the architecture {config['kind']} needs")
                shape, dtype = list(stored[name].get_shape()), _TORCH_DTYPES.get(stored[name].get_dtype())
                if shape != list(want.shape) or dtype != want.dtype:
                    raise ValueError(f"{path}: {name!r} is {stored[name].get_dtype()}{shape}, the architecture "
                                     f"makes {want.dtype}{list(want.shape)}")
                tensor = f.get_tensor(name)
                # As load_model in C++: a NaN or infinite weight loads and runs, and makes every output NaN.
                if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                    raise ValueError(f"{path}: tensor {printable(repr(name))} holds a NaN or infinite value")
                if _is_derived_buffer(name) and not torch.equal(tensor, want):
                    raise ValueError(f"{path}: {name!r} differs from the one the architecture makes")
                loaded[name] = tensor
    except SafetensorError as e:
        raise ValueError(f"{path}: not a safetensors file ({printable(str(e))})") from None
    model.net.load_state_dict(loaded)
    model.training_json = training
    return model.to(device).eval()


def save_model(model, path, training=None):
    """Writes ``model`` (a LegalNet) as a model.safetensors that ``train``'s evaluate and
    load_model read, through a temporary renamed when complete."""
    state = {name: t.detach().cpu().contiguous() for name, t in model.net.state_dict().items()}
    metadata = {"format": MODEL_FORMAT, "config": json.dumps(model.config, separators=(",", ":")),
                "training": json.dumps(training if training is not None else {})}
    write_atomically(path, lambda temp: save_file(state, temp, metadata=metadata))


def write_atomically(path, write):
    """Calls ``write(temp)`` for a temporary beside ``path`` and renames it onto ``path`` when
    ``write`` returns; on failure the temporary is removed and ``path`` is as it was. The file
    gets the mode a new file of the user's gets (0666 less the umask), as the C++ tools' outputs
    do, not mkstemp's 0600."""
    path = str(path)
    folder = os.path.dirname(os.path.abspath(path))
    # The temporary keeps the extension: some writers (torch.export.save) go by it.
    fd, temp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", suffix=os.path.splitext(path)[1], dir=folder)
    os.close(fd)
    try:
        try:
            write(temp)
        except RuntimeError as error:
            # torch's writers (torch.export.save's zip writer) report a full disk as their own
            # failed check ("unexpected pos ..."): named for what it is when the disk is full.
            stats = os.statvfs(folder)
            if stats.f_bavail * stats.f_frsize < (1 << 20):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path) from error
            raise
        with open(temp, "rb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _umask():
    """This process's umask, read without changing it where Linux tells it (os.umask can only
    set it, and another thread creating a file meanwhile would get the wrong mode)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false"}
_TORCH_DTYPES = {"F32": torch.float32, "I64": torch.int64, "BOOL": torch.bool}
_DTYPE_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}


def _dtype_size(name):
    return _DTYPE_SIZES.get(name, 1)


def _elements(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n
