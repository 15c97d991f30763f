"""The Python package against what the C++ test wrote for one model (tests/nn/nn_test.cpp):
NAME.safetensors, NAME.inputs.f32 / NAME.targets.f32 (the C++ training batch of the dataset's first ROWS
rows), NAME.logits.f32 (the C++ logits of those inputs), NAME.fens with NAME.fen_inputs.f32 (the
C++ inputs of those positions). Checks that legalnet.Dataset gives the same bytes (item by item,
in batches in any order, and through DataLoader workers), that
legalnet.load_model gives the same logits within 1e-5, that encode_fen gives the same inputs,
that the ONNX (run by onnxruntime), torch.export and TorchScript exports reproduce the logits in a
process without legalnet, and writes NAME.from_python.safetensors (a model of the same
architecture with Python's own random weights) with its logits NAME.from_python.logits.f32, which
the C++ test loads and compares.
Usage: check_against_cpp.py NAME DATASET ROWS"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import legalnet  # noqa: E402


def floats(path, *shape):
    return np.fromfile(path, dtype=np.float32).reshape(*shape)


def main(name, dataset, rows):
    rows = int(rows)
    torch.set_num_threads(1)
    model = legalnet.load_model(name + ".safetensors")
    planes = legalnet.input_kind(model.inputs).planes
    inputs = floats(name + ".inputs.f32", rows, planes, 8, 8)
    targets = floats(name + ".targets.f32", rows, 4096)

    data = legalnet.Dataset(dataset, inputs=model.inputs, rows=range(rows))
    x = torch.stack([data[i][0] for i in range(rows)]).numpy()
    y = torch.stack([data[i][1] for i in range(rows)]).numpy()
    assert (x == inputs).all(), f"Dataset inputs differ at {np.argwhere(x != inputs)[:5].tolist()}"
    assert (y == targets).all(), f"Dataset targets differ at {np.argwhere(y != targets)[:5].tolist()}"
    check_batches(data, inputs, targets)

    expected = floats(name + ".logits.f32", rows, 4096)
    with torch.no_grad():
        got = model(torch.from_numpy(inputs)).numpy()
    err = float(np.abs(got - expected).max())
    assert err < 1e-5, f"logits differ by {err}"

    fens = open(name + ".fens").read().split("\n")[:-1]
    fen_inputs = floats(name + ".fen_inputs.f32", len(fens), planes, 8, 8)
    for i, fen in enumerate(fens):
        mine = legalnet.encode_fen(fen, model.inputs)
        assert (mine == fen_inputs[i]).all(), f"encode_fen({fen!r}) differs at {np.argwhere(mine != fen_inputs[i]).tolist()[:5]}"

    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "x.npy"), inputs)
        extensions = (".onnx", ".pt2", ".ts")
        exported = [os.path.join(tmp, "model" + extension) for extension in extensions]
        for path in exported:
            legalnet.export_model(name + ".safetensors", path)
        # The three files in one process (one import of torch, not three). -I: isolated (no
        # PYTHONPATH, no user site, not the script's folder); run from elsewhere.
        run = subprocess.run([sys.executable, "-I", "-c", RUN_EXPORT, os.path.join(tmp, "x.npy"), *exported],
                             cwd=tmp, capture_output=True, text=True,
                             env={"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1"})
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == [model.inputs] * len(extensions), (extensions, run.stdout)
        export_err = {}
        for extension, path in zip(extensions, exported):
            export_err[extension] = float(np.abs(np.load(path + ".y.npy") - expected).max())
            assert export_err[extension] < 1e-5, f"{extension} logits differ by {export_err[extension]}"

    # The other way: a model Python wrote, for the C++ test to load.
    fresh = legalnet.LegalNet(model.config).eval()
    with torch.no_grad():
        for key, buffer in fresh.net.named_buffers():
            if "running" in key:
                buffer.uniform_(0.5, 1.5)
        np.asarray(fresh(torch.from_numpy(inputs)).numpy(), dtype=np.float32).tofile(name + ".from_python.logits.f32")
    legalnet.save_model(fresh, name + ".from_python.safetensors")
    print(f"ok: {describe(model.config)} ({rows} rows, {len(fens)} FENs; logits within {err:.1e}; exports: " +
          ", ".join(f"{k} {v:.1e}" for k, v in export_err.items()) + ")")


# Runs exported files with no legalnet: onnxruntime for .onnx, torch.export.load for .pt2,
# torch.jit.load for .ts; writes each file's logits to PATH.y.npy and prints the input kind each
# file names, one a line. Usage: -c RUN_EXPORT X.npy PATH...
RUN_EXPORT = """
import sys, numpy, torch
x = numpy.load(sys.argv[1])
for path in sys.argv[2:]:
    if path.endswith(".onnx"):
        import onnx, onnxruntime
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        out = session.run(None, {session.get_inputs()[0].name: x})[0]
        inputs = {p.key: p.value for p in onnx.load(path).metadata_props}["legalnet_inputs"]
    elif path.endswith(".pt2"):
        extra = {"legalnet_inputs": ""}
        program = torch.export.load(path, extra_files=extra)
        out, inputs = program.module()(torch.from_numpy(x)).detach().numpy(), extra["legalnet_inputs"]
    else:
        m = torch.jit.load(path)
        out, inputs = m(torch.from_numpy(x)).detach().numpy(), m.inputs
    assert "legalnet" not in sys.modules
    numpy.save(path + ".y.npy", out)
    print(inputs)
"""


def check_batches(data, inputs, targets):
    """The Dataset's rows as a DataLoader fetches them (whole batches through __getitems__, in
    any order, in forked worker processes, through a cache that fills and empties) are the C++
    rows of the same indices."""
    def same(order, batches, what):
        x = torch.cat([b[0] for b in batches]).numpy()
        y = torch.cat([b[1] for b in batches]).numpy()
        assert (x == inputs[order]).all(), f"{what}: inputs differ"
        assert (y == targets[order]).all(), f"{what}: targets differ"

    rows = len(data)
    order = np.random.default_rng(rows).permutation(rows)
    same(order, [data.batch(order)], "one shuffled batch")
    tiny_cache = legalnet.Dataset(data.path, inputs=data.inputs, rows=data.rows, cache_bytes=1)
    same(order, [tiny_cache.batch(order)], "a cache smaller than the rows")
    loader = torch.utils.data.DataLoader(data, batch_size=32, sampler=order.tolist(), num_workers=2,
                                         multiprocessing_context="fork")
    same(order, list(loader), "DataLoader, 2 forked workers")
    blocks = dict(block_rows=64, buffer_blocks=2, seed=5, workers=2, batch_size=32)
    expected = list(legalnet.BlockShuffleSampler(data, **blocks))
    loader = torch.utils.data.DataLoader(data, batch_size=32, sampler=legalnet.BlockShuffleSampler(data, **blocks),
                                         num_workers=2, multiprocessing_context="fork")
    same(np.array(expected), list(loader), "DataLoader, BlockShuffleSampler")


def describe(c):
    """ModelConfig::describe() of lib/nn/model_config.cpp."""
    size = f"{c['blocks']}x{c['channels']}"
    text = {"mlp": f"mlp {c['hidden']}", "conv": f"conv {size} fc {c['hidden']}",
            "attention": f"attention {size} h{c['heads']} ff{c['hidden']}",
            "resnet": f"resnet {size}" + (" se" if c["squeeze_excitation"] else "")
            + ("" if c.get("mixing", "none") == "none" else " " + c["mixing"])
            + ("" if c.get("policy_head", "types") == "types" else " " + c["policy_head"])
            + (" paths" if c.get("paths", False) else "")
            + (" vetoes" if c.get("vetoes", False) else "")
            + (" skip" if c.get("input_skip", False) else "")
            + ((" rules-lines" if c.get("rule_lines", False) else " rules") if c.get("rules_head", False)
               else "")}[c["kind"]]
    kind = c.get("input_kind", c.get("inputs", "planes"))
    return text + ("" if kind == "planes" else " +" + kind)


if __name__ == "__main__":
    main(*sys.argv[1:4])
