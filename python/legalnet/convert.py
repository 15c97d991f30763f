"""A model.pt of an earlier legalnet (a TorchScript archive that train wrote) to a model.safetensors,
read as data: nothing of the file runs.

Why this is safe where torch.jit.load is not: torch.jit.load compiles the archive's code/ folder
and runs the __setstate__ methods it finds there, so a crafted file runs what it likes. Here the
code/ folder is never read. The module tree is in data.pkl, a pickle, which is read by an
Unpickler whose find_class returns only four things of ours (a plain holder for each module, a
function that views a storage's bytes with checked bounds, OrderedDict, and dtype markers for the
storage classes) and refuses every other name. A pickle can call only what find_class gives it
(REDUCE, NEWOBJ and BUILD call objects on its stack, and the only callables that reach the stack
come from find_class or persistent_load), so nothing else can run: the principle of
torch.load(weights_only=True), which refuses TorchScript archives. The tensors' bytes come from
the archive's data/ entries (stored, never compressed, sizes checked against the pickle's
counts), and the model then goes through the same checks as load_model."""
import collections
import io
import os
import pickle
import zipfile

import torch

from .model_file import MAX_PARAMETERS, min_parameters, resolve_config, save_model
from .models import LegalNet
from .untrusted import load_json, printable

_STORAGES = {"FloatStorage": torch.float32, "LongStorage": torch.int64, "BoolStorage": torch.bool}
_MAX_PICKLE = 64 << 20


class _Module:
    """What a TorchScript module of the archive becomes: its attributes, nothing more."""

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("a module's state is not a dict")
        self.attributes = state


def _tensor(storage, offset, size, stride, *_):
    """torch._utils._rebuild_tensor_v2, checked: the view must lie inside its storage and hold no
    more elements than the storage (a stride-0 view of one value can name gigabytes)."""
    if not (isinstance(storage, torch.Tensor) and isinstance(offset, int) and isinstance(size, tuple)
            and isinstance(stride, tuple) and len(size) == len(stride) and len(size) <= 8
            and all(isinstance(v, int) and v >= 0 for v in (offset, *size, *stride))):
        raise pickle.UnpicklingError("a tensor's offset, size or stride is not a list of non-negative integers")
    if any(n == 0 for n in size):
        return torch.empty(size, dtype=storage.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= storage.numel():
        raise pickle.UnpicklingError(f"a tensor reaches element {last} of a storage of {storage.numel()}")
    elements = 1
    for n in size:
        elements *= n
    if elements > storage.numel():
        raise pickle.UnpicklingError(f"a tensor of {elements} elements views a storage of {storage.numel()}")
    return torch.as_strided(storage, size, stride, offset).clone()


class _DataOnly(pickle.Unpickler):
    def __init__(self, archive, prefix, file_size):
        super().__init__(io.BytesIO(archive.read(prefix + "data.pkl")))
        self.archive, self.prefix, self.file_size = archive, prefix, file_size
        self.tensor_bytes = 0  # of every tensor rebuilt so far

    def _tensor(self, storage, *args):
        """_tensor, and all tensors together no larger than the file: views of one storage
        rebuilt many times would copy it as often."""
        t = _tensor(storage, *args)
        self.tensor_bytes += t.numel() * t.element_size()
        if self.tensor_bytes > self.file_size:
            raise pickle.UnpicklingError(f"the tensors hold more than the file's {self.file_size} bytes")
        return t

    def find_class(self, module, name):
        if module.startswith("__torch__") and name == "Module":
            return _Module
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return self._tensor
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if module == "torch" and name in _STORAGES:
            return _STORAGES[name]
        raise pickle.UnpicklingError(f"refused: {module}.{name} is not part of a legalnet model")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], torch.dtype)
                and isinstance(pid[2], str) and pid[2].isdigit() and isinstance(pid[4], int) and pid[4] >= 0):
            raise pickle.UnpicklingError("a storage reference is not ('storage', type, key, location, count)")
        dtype, key, count = pid[1], pid[2], pid[4]
        try:
            info = self.archive.getinfo(f"{self.prefix}data/{key}")
        except KeyError:
            raise pickle.UnpicklingError(f"storage {key} is not in the archive") from None
        size = count * torch.empty((), dtype=dtype).element_size()
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != size or size > self.file_size:
            raise pickle.UnpicklingError(f"storage {key}: {info.file_size} bytes stored for {count} values")
        data = bytearray(self.archive.read(info))
        return torch.frombuffer(data, dtype=dtype) if data else torch.empty(0, dtype=dtype)


_MAX_MODULES = 100_000  # a legalnet net has a few hundred
_MAX_NESTING = 64


def _flatten(root, tensors, strings):
    """The tree's tensors and strings by dotted name, walked without recursion. A module reached
    twice is refused: a pickle's memo can share one module 2^40 ways in a few hundred bytes."""
    seen = set()
    stack = [(root, "")]
    while stack:
        module, prefix = stack.pop()
        if id(module) in seen:
            raise ValueError(f"module {prefix[:-1]!r} appears more than once in the tree")
        seen.add(id(module))
        if len(seen) > _MAX_MODULES or prefix.count(".") > _MAX_NESTING:
            raise ValueError("modules nested too deep or too many")
        attributes = getattr(module, "attributes", None)
        if not isinstance(attributes, dict):
            raise ValueError(f"module {prefix[:-1]!r} has no state")
        for key, value in attributes.items():
            if not isinstance(key, str):
                raise ValueError("an attribute name is not a string")
            if isinstance(value, _Module):
                stack.append((value, prefix + key + "."))
            elif isinstance(value, torch.Tensor):
                tensors[prefix + key] = value
            elif isinstance(value, str):
                strings[prefix + key] = value
            else:
                raise ValueError(f"attribute {prefix + key!r} is a {type(value).__name__}")


def read_old_model(path):
    """The LegalNet of an earlier legalnet's model.pt, read without running anything from it."""
    path = str(path)
    file_size = os.path.getsize(path)
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
            if len(pickles) != 1:
                raise ValueError(f"{path}: not a TorchScript archive (no single data.pkl)")
            if archive.getinfo(pickles[0]).file_size > min(_MAX_PICKLE, file_size):
                raise ValueError(f"{path}: data.pkl is larger than the archive")
            root = _DataOnly(archive, pickles[0][:-len("data.pkl")], file_size).load()
    except (zipfile.BadZipFile, pickle.UnpicklingError, EOFError, RecursionError, TypeError, AttributeError,
            IndexError, KeyError) as e:
        raise ValueError(f"{path}: not a model.pt of legalnet ({type(e).__name__}: {printable(str(e))})") from None
    if not isinstance(root, _Module):
        raise ValueError(f"{path}: not a model.pt of legalnet (the root is not a module)")
    tensors, strings = {}, {}
    try:
        _flatten(root, tensors, strings)
    except ValueError as e:
        raise ValueError(f"{path}: not a model.pt of legalnet ({printable(str(e))})") from None
    if strings.get("legalnet_format") != "legalnet-model 1":
        raise ValueError(f"{path}: format {printable(repr(strings.get('legalnet_format')))} is not 'legalnet-model 1'")
    try:
        config = resolve_config(load_json(strings.get("legalnet_config", ""), max_bytes=1 << 16))
    except ValueError as e:
        raise ValueError(f"{path}: config: {printable(str(e))}") from None
    if min_parameters(config) > min(MAX_PARAMETERS, sum(t.numel() for t in tensors.values())):
        raise ValueError(f"{path}: the config asks for more weights than the file holds")
    model = LegalNet(config)
    want = model.net.state_dict()
    if set(want) != set(tensors):
        raise ValueError(f"{path}: tensors {sorted(set(want) ^ set(tensors))[:3]} differ from the architecture's")
    for name, t in want.items():
        if tensors[name].shape != t.shape or tensors[name].dtype != t.dtype:
            raise ValueError(f"{path}: {name!r} is {tensors[name].dtype}{list(tensors[name].shape)}, the "
                             f"architecture makes {t.dtype}{list(t.shape)}")
        if name.rsplit(".", 1)[-1] in ("source", "fixed_off", "impossible") and not torch.equal(tensors[name], t):
            raise ValueError(f"{path}: {name!r} differs from the one the architecture makes")
    model.net.load_state_dict(tensors)
    try:  # written back as the new file's 'training': bounded as load_model reads it
        model.training_record = load_json(strings.get("legalnet_training", "{}"), max_bytes=4 << 20)
    except ValueError:
        model.training_record = {}
    return model.eval()


def convert_old_model(old_path, new_path):
    """Writes the model of an earlier legalnet's model.pt as a model.safetensors."""
    if os.path.exists(new_path) and os.path.samefile(old_path, new_path):
        raise ValueError(f"{new_path}: is the model being converted; name another output")
    model = read_old_model(old_path)
    save_model(model, new_path, training=model.training_record)
