"""A model for people without legalnet: ONNX (onnxruntime and most inference servers) or a
torch.export program (.pt2), and TorchScript (.ts) while torch still runs it (legacy: deprecated
since torch 2.11). Each takes inputs float32 [B, C, 8, 8] of the model's input kind (stored in the
file as ``legalnet_inputs``) and gives logits [B, 4096]. An exported file is a program, not data:
loading a .pt2 or .ts file runs the graph it holds, so hand one only to people who trust you."""
import json
import logging
import os
import warnings

import torch

from .inputs import input_kind
from .model_file import load_model, write_atomically
from .untrusted import quoted

FORMATS = {".onnx": "ONNX", ".pt2": "torch.export", ".ts": "TorchScript (legacy)"}


def export_model(model_path, out_path):
    """Writes the model of ``model_path`` in the format ``out_path``'s extension names (FORMATS),
    through a temporary renamed when complete (in a folder of its own that no one else can write
    in: model_file.write_atomically); returns the format's name. ValueError, before any work, for
    an unknown extension or an output that is the model itself."""
    model_path, out_path = str(model_path), str(out_path)
    extension = os.path.splitext(out_path)[1].lower()
    if extension not in FORMATS:
        raise ValueError(f"{out_path}: unknown export format {quoted(extension or '(none)')} "
                         f"(expected {', '.join(FORMATS)})")
    if os.path.realpath(out_path) == os.path.realpath(model_path) or (
            os.path.exists(out_path) and os.path.samefile(out_path, model_path)):
        raise ValueError(f"{out_path}: is the model being exported; name another output")
    if os.path.isdir(out_path):
        raise ValueError(f"{out_path}: is a folder")
    model = load_model(model_path)
    write = {".onnx": _write_onnx, ".pt2": _write_program, ".ts": _write_torchscript}[extension]
    write_atomically(out_path, lambda temp: write(model, temp))
    return FORMATS[extension]


def _example(model, batch=2):
    return torch.zeros(batch, input_kind(model.inputs).planes, 8, 8)


def _batch_dimension():
    return {"x": {0: torch.export.Dim("batch", min=1, max=1 << 16)}}


def _write_onnx(model, path):
    import onnx  # only needed here
    exporter_log = logging.getLogger("torch.onnx")
    level = exporter_log.level
    exporter_log.setLevel(logging.ERROR)  # it lists the torchvision operators it skips
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(model, (_example(model),), dynamo=True, dynamic_shapes=_batch_dimension(),
                                        input_names=["inputs"], output_names=["logits"], verbose=False)
    finally:
        exporter_log.setLevel(level)
    proto = program.model_proto
    for key, value in (("legalnet_inputs", model.inputs), ("legalnet_config", json.dumps(model.config))):
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(proto, path)


def _write_program(model, path):
    program = torch.export.export(model, (_example(model),), dynamic_shapes=_batch_dimension())
    torch.export.save(program, path, extra_files={"legalnet_inputs": model.inputs,
                                                  "legalnet_config": json.dumps(model.config)})


def _write_torchscript(model, path):
    # Through a file object: torch's writer, given a name, ends the process (std::terminate) on a
    # write error such as a full disk; given a file, it raises the OSError.
    with open(path, "xb") as f:
        torch.jit.save(torch.jit.script(model), f)


def export_torchscript(model_path, out_path):
    """Legacy: a TorchScript file of a model.safetensors that ``torch.jit.load(out_path)(x)`` runs
    with no legalnet code installed; its ``inputs`` and ``config_json`` attributes say what x must
    hold. Prefer export_model(model, "NAME.onnx" or "NAME.pt2")."""
    if os.path.splitext(str(out_path))[1].lower() != ".ts":
        raise ValueError(f"{out_path}: a TorchScript export is named NAME.ts")
    return export_model(model_path, out_path)
