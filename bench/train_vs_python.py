"""The predecessor's training loop in Python PyTorch (TensorDataset + DataLoader, Adam, BCE) on the
same architecture, inputs, batch and threads as legalnet's C++ loop, built by the legalnet
package (python/legalnet). PRECISION=bf16 wraps the forward pass in torch.autocast.
DEVICE=cuda (or cuda:N) trains on a GPU as legalnet's bench does there (legalnet_train_bench with
DEVICE=cuda): PRECISION=fp32 is strict IEEE fp32, tf32 lets cuBLAS and cuDNN multiply fp32 in
TensorFloat-32, bf16 autocasts (TF32 for what stays fp32), cuDNN in benchmark mode; the clock
is read after torch.cuda.synchronize(). READY=1 replaces the DataLoader by 8 batches already on
the device (the loop without data loading).
Usage: [DEVICE=cuda] [PRECISION=fp32|tf32|bf16] [READY=1] OMP_WAIT_POLICY=PASSIVE train_vs_python.py
       DATASET.h5 KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS] [INPUTS]"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import legalnet  # noqa: E402


def main(path, kind, hidden, blocks, channels, steps=60, batch=256, threads=2, inputs="state"):
    steps, batch, threads = int(steps), int(batch), int(threads)
    torch.set_num_threads(threads)
    n = batch * 64
    x, y = _read(path, inputs, n)
    defaults = {"mlp": (4096, 0, 0), "conv": (1024, 8, 128), "resnet": (0, 6, 32), "attention": (0, 6, 64)}[kind]
    channels = int(channels) or defaults[2]
    config = {"kind": kind, "hidden": int(hidden) or defaults[0] or 2 * channels, "blocks": int(blocks) or defaults[1],
              "channels": channels, "heads": 4, "squeeze_excitation": False,
              # FULL_HEAD=1: the predecessor's own models, with a 4096-wide last layer.
              "geometric_head": kind in ("resnet", "attention") or os.environ.get("FULL_HEAD") != "1",
              # train's --policy-head auto, as legalnet_train_bench builds it.
              "policy_head": "pairs" if kind == "resnet" else "types",
              "inputs": inputs}
    device = torch.device(os.environ.get("DEVICE") or "cpu")
    precision = os.environ.get("PRECISION") or "fp32"
    if precision not in ("fp32", "tf32", "bf16") or (precision == "tf32" and device.type != "cuda"):
        sys.exit(f"train_vs_python.py: PRECISION={precision}: expected fp32 or bf16 (tf32 on CUDA only)")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit(f"train_vs_python.py: DEVICE={device}: torch {torch.__version__} sees no CUDA device")
        _set_cuda_precision(precision)
    bf16 = precision == "bf16"
    net = legalnet.LegalNet(config).to(device)
    pin = device.type == "cuda"
    if os.environ.get("READY") == "1":
        ready = [(x[i * batch:(i + 1) * batch].to(device), y[i * batch:(i + 1) * batch].to(device)) for i in range(8)]
        loader = ready * ((steps + 5) // len(ready) + 1)
    else:
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch, shuffle=True,
                                             drop_last=True, pin_memory=pin)
    adam = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    done, start = 0, None
    while done < steps + 5:
        for xb, yb in loader:
            if done == 5:
                _synchronize(device)
                start = time.perf_counter()
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                logits = net(xb)
            loss = loss_fn(logits.float(), yb)
            adam.zero_grad()
            loss.backward()
            adam.step()
            done += 1
            if done >= steps + 5:
                break
    _synchronize(device)
    rate = steps * batch / (time.perf_counter() - start)
    head = "1792-wide head" if config["geometric_head"] else "4096-wide head"
    head += ", pairs" if config["policy_head"] == "pairs" else ""
    spin = f", GOMP_SPINCOUNT={os.environ['GOMP_SPINCOUNT']}" if "GOMP_SPINCOUNT" in os.environ else ""
    where = f"{device}, " if device.type != "cpu" else ""
    what = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16 autocast"}[precision]
    data = ", ready batches" if os.environ.get("READY") == "1" else ""
    print(f"python {kind} {config['hidden']} {config['blocks']}x{config['channels']} inputs {inputs} ({head}, "
          f"{where}{what}{data}{spin}): {rate:.0f} samples/s")


def _set_cuda_precision(precision):
    """fp32: IEEE fp32 matmuls and convolutions; tf32 and bf16: TF32 for fp32 ones (as legalnet's
    configure_for_speed). torch 2.9+ has fp32_precision; older ones allow_tf32."""
    tf32 = precision != "fp32"
    torch.backends.cudnn.benchmark = True
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "tf32" if tf32 else "ieee"
        torch.backends.cudnn.conv.fp32_precision = "tf32" if tf32 else "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32


def _synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _read(path, inputs, n):
    """The first n rows as network inputs and targets, read in contiguous slices."""
    import h5py
    with h5py.File(path, "r") as f:
        squares, side = legalnet.squares_from_planes(f["positions"][:n])
        x = legalnet.encode_batch(inputs, squares, side, f["castling"][:n], f["en_passant"][:n])
        y = legalnet.encode_targets(inputs, f["legal_moves"][:n], side)
    return torch.from_numpy(x), torch.from_numpy(y)


if __name__ == "__main__":
    main(*sys.argv[1:])
