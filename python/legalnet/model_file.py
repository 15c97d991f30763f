"""Model files as lib/nn/model_file.h writes them: safetensors (data only: reading one runs
nothing from it) with the net's tensors under torch's names and, in the metadata, ``format``
("legalnet-model 2"), ``config`` (the architecture, JSON) and ``training`` (JSON). Every size is
checked before the net is built: the header by the safetensors reader, the config against the
same caps as ModelConfig::resolved() and against the floats the file holds. The metadata's
``legalnet_data_crc32`` (every writer of model files, Python's and C++'s, stores it) is the
CRC-32 of the tensors' bytes: a file damaged in a copy is refused in one line instead of giving
wrong figures; files from before it load without the check."""
import errno
import json
import os
import shutil
import stat
import struct
import tempfile
import zlib

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from .inputs import config_input_kind, input_kind
from .models import MODEL_SPECS, RULE_LINE_PLANES, VETO_LINES, VETOES_PER_LINE, LegalNet
from .moves import GEOMETRIC
from .renames import _sync, _sync_folder
from .untrusted import load_json, printable

MODEL_FORMAT = "legalnet-model 2"
# The metadata entry holding the zlib CRC-32 of the tensors' bytes in the order of their names, as
# 8 lowercase hex digits: nn::safetensors::DATA_CRC_KEY (lib/nn/safetensors.h).
DATA_CRC_KEY = "legalnet_data_crc32"
MAX_HEADER_BYTES = 16 << 20  # nn::safetensors::Limits: max_header_bytes, max_data_bytes
MAX_DATA_BYTES = 16 << 30
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
               ("input_kind", str, "planes"), ("inputs", str, "planes"),
               ("rules_head", bool, False),  # absent in nets trained without train --rules-weight
               ("rule_lines", bool, False),  # absent in nets trained without train --rule-lines
               ("paths", bool, False),  # absent in nets trained without train --paths
               ("vetoes", bool, False),  # absent in nets trained without train --vetoes
               ("input_skip", bool, False))  # absent in nets trained without train --input-skip
MIXINGS = ("none", "lines", "rays")  # nn::MIXINGS
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
    c.setdefault("rules_head", False)
    c.setdefault("rule_lines", False)
    c.setdefault("paths", False)
    c.setdefault("vetoes", False)
    c.setdefault("input_skip", False)
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
    if c["rules_head"] and c["kind"] != "resnet":
        raise ValueError(f"the rules head (train --rules-weight) is a resnet option, not {c['kind']}'s")
    if c["rule_lines"] and not c["rules_head"]:
        raise ValueError("the rule lines (train --rule-lines) are targets of the rules head: give --rules-weight too")
    if c["paths"] and c["kind"] != "resnet":
        raise ValueError(f"the paths (train --paths) are a resnet option, not {c['kind']}'s")
    if c["vetoes"] and c["kind"] != "resnet":
        raise ValueError(f"the vetoes (train --vetoes) are a resnet option, not {c['kind']}'s")
    if c["input_skip"] and c["kind"] != "resnet":
        raise ValueError(f"the input skip (train --input-skip) is a resnet option, not {c['kind']}'s")
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
    r = max(d // 4, 1)  # nn::ray_scan_width
    rays = d * 2 * r + 8 * r * d if c["mixing"] == "rays" else 0
    return (inp * 9 * d + c["blocks"] * (2 * 9 * d * d + rays) + d * 64
            + (2 * d * d if c["policy_head"] == "pairs" else 0) + rule_target_planes(c) * d
            + (d if c["paths"] else 0) + (d * 2 * VETO_LINES * VETOES_PER_LINE if c["vetoes"] else 0)
            + (inp * d if c["input_skip"] else 0))


def rule_target_planes(c):
    """encode::rule_target_planes(ModelConfig::rule_targets()): the rules head's outputs a square."""
    return (RULE_LINE_PLANES if c.get("rule_lines", False) else 3) if c.get("rules_head", False) else 0


def _is_derived_buffer(name):
    """The index heads' move maps: built from the config, compared with the file's, never loaded."""
    return name.rsplit(".", 1)[-1] in ("source", "fixed_off", "impossible")


def _read_regular(path):
    """All the bytes of ``path``, read through one descriptor (what is checked is what is loaded:
    nothing reads the name a second time), refusing what is not a regular file (a FIFO would
    never end), the TorchScript archives of earlier versions, and before reading the rest, a
    header length or a size that no model file has (nn::safetensors::Reader's limits)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    with os.fdopen(fd, "rb", buffering=0) as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise ValueError(f"{path}: not a regular file")
            start = os.pread(fd, 8, 0)
            if start[:4] == b"PK\x03\x04":
                raise ValueError(f"{path}: {_OLD_FORMAT}")
            if len(start) == 8:
                header_bytes = struct.unpack("<Q", start)[0]
                if header_bytes > st.st_size - 8:
                    raise ValueError(f"{path}: not a safetensors file (header length {header_bytes} runs past the "
                                     f"end of the file, {st.st_size} bytes)")
                if header_bytes > MAX_HEADER_BYTES:
                    raise ValueError(f"{path}: safetensors header of {header_bytes} bytes (at most "
                                     f"{MAX_HEADER_BYTES} bytes)")
                if st.st_size - 8 - header_bytes > MAX_DATA_BYTES:
                    raise ValueError(f"{path}: {st.st_size - 8 - header_bytes} bytes of tensors (at most "
                                     f"{MAX_DATA_BYTES} bytes)")
            return f.readall()
        except OSError as e:
            raise ValueError(f"{path}: cannot read: {e.strerror}") from None


def data_crc(data):
    """The ``legalnet_data_crc32`` of a model file's bytes ``data`` (bytes-like, header
    included): the CRC-32 of the tensors' bytes, each tensor's in the order of the names (as
    lib/nn/safetensors.cpp computes it: the same tensors give the same value in any layout), 8
    lowercase hex digits."""
    header_bytes = struct.unpack_from("<Q", data)[0]
    header = json.loads(bytes(memoryview(data)[8:8 + header_bytes]))
    view, start, crc = memoryview(data), 8 + header_bytes, 0
    for name in sorted(k for k in header if k != "__metadata__"):
        begin, end = header[name]["data_offsets"]
        crc = zlib.crc32(view[start + begin:start + end], crc)
    return f"{crc & 0xFFFFFFFF:08x}"


def _check_data_crc(path, data, metadata):
    """Nothing when the metadata has no checksum (a file from before it, or another writer's)
    or when it matches the data; ValueError naming the file otherwise."""
    stored = metadata.get(DATA_CRC_KEY)
    if stored is None:
        return
    computed = data_crc(data)
    if stored != computed:
        raise ValueError(f"{path}: the tensors do not match their checksum ({DATA_CRC_KEY} "
                         f"{printable(str(stored))}, computed {computed}): the file is damaged; "
                         "copy it again or retrain")


def load_model(path, device="cpu"):
    """The model of a model.safetensors written by ``train`` (or save_model), in eval mode on
    ``device``; ``.inputs`` names its input kind and ``.config`` its architecture. ValueError,
    naming the file, for anything else."""
    path = str(path)
    data = _read_regular(path)
    try:
        # The whole header is checked here (JSON, dtypes, shapes, offsets tiling the data to its
        # end); the tensors are copies of the bytes read, as large as the file at most.
        tensors = load_tensors(data)
    except (SafetensorError, KeyError, TypeError, ValueError) as e:  # KeyError: a dtype torch lacks
        raise ValueError(f"{path}: not a safetensors file ({printable(str(e))})") from None
    header_bytes = struct.unpack_from("<Q", data)[0]
    try:
        header = load_json(data[8:8 + header_bytes], max_bytes=MAX_HEADER_BYTES)
    except ValueError as e:
        raise ValueError(f"{path}: safetensors header is {e}") from None
    metadata = header.get("__metadata__") or {}
    _check_data_crc(path, data, metadata)
    del data
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
    # The tensors are the file's bytes: the net is not built before the config is known to fit them.
    floats = sum(t.numel() * t.element_size() for t in tensors.values()) // 4
    if min_parameters(config) > floats:
        raise ValueError(f"{path}: the config asks for a {config['kind']} {config['blocks']}x"
                         f"{config['channels']} hidden {config['hidden']} (at least {min_parameters(config)}"
                         f" weights), the file holds {floats * 4} bytes of tensors")
    model = LegalNet(config)
    state = model.net.state_dict()
    for name in tensors:
        if name not in state:
            raise ValueError(f"{path}: tensor {name!r} is not part of the architecture {config['kind']}")
    loaded = {}
    for name, want in state.items():
        if name not in tensors:
            raise ValueError(f"{path}: no tensor {name!r}, which the architecture {config['kind']} needs")
        tensor, dtype_name = tensors[name], header[name]["dtype"]
        if list(tensor.shape) != list(want.shape) or _TORCH_DTYPES.get(dtype_name) != want.dtype:
            raise ValueError(f"{path}: {name!r} is {dtype_name}{list(tensor.shape)}, the architecture "
                             f"makes {want.dtype}{list(want.shape)}")
        # As load_model in C++: a NaN or infinite weight loads and runs, and makes every output NaN.
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{path}: tensor {printable(repr(name))} holds a NaN or infinite value")
        if _is_derived_buffer(name) and not torch.equal(tensor, want):
            raise ValueError(f"{path}: {name!r} differs from the one the architecture makes")
        loaded[name] = tensor
    model.net.load_state_dict(loaded)
    model.training_json = training
    return model.to(device).eval()


def save_model(model, path, training=None):
    """Writes ``model`` (a LegalNet) as a model.safetensors that ``train``'s evaluate and
    load_model read, through a temporary renamed when complete. A missing folder is made first
    (as train makes its --out folder); a path that is a folder is refused before any work."""
    path = str(path)
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a folder")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    state = {name: t.detach().cpu().contiguous() for name, t in model.net.state_dict().items()}
    metadata = {"format": MODEL_FORMAT, "config": json.dumps(model.config, separators=(",", ":")),
                "training": json.dumps(training if training is not None else {})}
    header, body = with_data_crc(save_tensors(state, metadata=metadata))

    def write(temp):
        with open(temp, "xb") as f:
            f.write(header)
            f.write(body)
    write_atomically(path, write)


def with_data_crc(data):
    """The safetensors bytes ``data`` as (header, data section) with ``legalnet_data_crc32``
    added to the header's metadata: the header rewritten (padded with spaces so that the data
    starts 8-byte aligned, as safetensors writes it), the data section as it was."""
    header_bytes = struct.unpack_from("<Q", data)[0]
    header = json.loads(bytes(data[8:8 + header_bytes]))
    header.setdefault("__metadata__", {})[DATA_CRC_KEY] = data_crc(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, memoryview(data)[8 + header_bytes:]


def write_atomically(path, write):
    """Calls ``write(temp)`` for a temporary beside ``path`` and renames it onto ``path`` when
    ``write`` returns, after syncing it, then syncs the folder; on failure the temporary is
    removed and ``path`` is as it was. The temporary lies in a folder of its own
    (tempfile.mkdtemp: mode 0700, a name no one else can predict, in which no one else can
    create or replace a name) and ``temp`` reaches it through a descriptor of that folder where
    Linux's /proc allows: a writer that reopens ``temp`` by name (the ONNX and torch writers do)
    cannot be sent through a link planted there, nor into another folder put in its place. The
    file gets the mode a new file of the user's gets (0666 less the umask), as the C++ tools'
    outputs do, not mkstemp's 0600."""
    path = str(path)
    folder = os.path.dirname(os.path.abspath(path))
    # The temporary keeps the output's name and so its extension: some writers (torch.export.save) go by it.
    name = os.path.basename(path)
    private = tempfile.mkdtemp(prefix=name + ".tmp.", dir=folder)
    try:
        dir_fd = os.open(private, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) |
                         getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(dir_fd)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                raise RuntimeError(f"{private}: the temporary folder was replaced before it was written in; "
                                   f"{path} was not written")
            temp = _pinned(dir_fd, private, name)
            try:
                write(temp)
            except OSError as error:  # a full disk, a size limit: said of the output, not of the temporary
                if error.errno is None or error.filename not in (None, temp):
                    raise
                raise OSError(error.errno, error.strerror, path) from error
            except RuntimeError as error:
                # torch's writers (torch.export.save's zip writer) report a full disk as their own
                # failed check ("unexpected pos ..."): named for what it is when the disk is full.
                stats = os.statvfs(folder)
                if stats.f_bavail * stats.f_frsize < (1 << 20):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path) from error
                raise
            fd = os.open(temp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise RuntimeError(f"{temp}: the writer left no file; {path} was not written")
                os.fchmod(fd, 0o666 & ~_umask())
                _sync(fd, path)
            finally:
                os.close(fd)
            if os.replace in os.supports_dir_fd:
                os.replace(name, path, src_dir_fd=dir_fd)
            else:
                os.replace(temp, path)
        finally:
            os.close(dir_fd)
        _sync_folder(folder)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _pinned(dir_fd, folder, name):
    """``name`` in the folder open as ``dir_fd``, by a path that reaches that folder whatever is
    renamed meanwhile (/proc/self/fd/N/NAME on Linux), else ``folder``/``name``."""
    through = f"/proc/self/fd/{dir_fd}"
    try:
        if os.path.samestat(os.stat(through), os.fstat(dir_fd)):
            return os.path.join(through, name)
    except OSError:
        pass
    return os.path.join(folder, name)


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
