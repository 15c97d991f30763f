"""The predecessor's training loop in Python PyTorch (TensorDataset + DataLoader, Adam, BCE) on the
same architecture, inputs, batch and threads as legalnet's C++ loop, built by the legalnet
package (python/legalnet). PRECISION=bf16 wraps the forward pass in torch.autocast.
Usage: OMP_WAIT_POLICY=PASSIVE train_vs_python.py DATASET.h5 KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS] [INPUTS]"""
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
              "inputs": inputs}
    net = legalnet.LegalNet(config)
    bf16 = os.environ.get("PRECISION") == "bf16"
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch, shuffle=True,
                                         drop_last=True)
    adam = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    done, start = 0, None
    while done < steps + 5:
        for xb, yb in loader:
            if done == 5:
                start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = net(xb)
            loss = loss_fn(logits.float(), yb)
            adam.zero_grad()
            loss.backward()
            adam.step()
            done += 1
            if done >= steps + 5:
                break
    rate = steps * batch / (time.perf_counter() - start)
    head = "1792-wide head" if config["geometric_head"] else "4096-wide head"
    spin = f", GOMP_SPINCOUNT={os.environ['GOMP_SPINCOUNT']}" if "GOMP_SPINCOUNT" in os.environ else ""
    print(f"python {kind} {config['hidden']} {config['blocks']}x{config['channels']} inputs {inputs} ({head}, "
          f"{'bf16 autocast' if bf16 else 'fp32'}{spin}): {rate:.0f} samples/s")


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
