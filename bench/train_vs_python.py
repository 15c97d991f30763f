"""The predecessor's training loop in Python PyTorch (TensorDataset + DataLoader, Adam, BCE),
on the same architectures, batch and threads as legalnet's C++ loop.
Usage: OMP_WAIT_POLICY=PASSIVE train_vs_python.py DATASET.h5 KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS]"""
import os
import sys
import time

import h5py
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "nn"))
from load_in_python import LegalNet  # noqa: E402  (the architectures, as documented)


def main(path, kind, hidden, blocks, channels, steps=60, batch=256, threads=2):
    steps, batch, threads = int(steps), int(batch), int(threads)
    torch.set_num_threads(threads)
    n = batch * 64
    with h5py.File(path, "r") as f:
        planes = torch.from_numpy(f["positions"][:n]).float()
        masks = torch.from_numpy(f["legal_moves"][:n]).float()
    defaults = {"mlp": (4096, 0, 0), "conv": (1024, 8, 128), "resnet": (0, 6, 32)}[kind]
    config = {"kind": kind, "hidden": int(hidden) or defaults[0], "blocks": int(blocks) or defaults[1],
              "channels": int(channels) or defaults[2], "squeeze_excitation": False,
              # FULL_HEAD=1: the predecessor's own models, with a 4096-wide last layer.
              "geometric_head": kind == "resnet" or os.environ.get("FULL_HEAD") != "1"}
    net = LegalNet(config)
    if hasattr(net, "head"):  # the same fixed-off indices as the C++ model
        net.head.source.copy_(geometric_source(kind))
        net.head.fixed_off.fill_(-20.0)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(planes, masks), batch_size=batch, shuffle=True,
                                         drop_last=True)
    adam = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    done, start = 0, None
    while done < steps + 5:
        for x, y in loader:
            if done == 5:
                start = time.perf_counter()
            loss = loss_fn(net(x), y)
            adam.zero_grad()
            loss.backward()
            adam.step()
            done += 1
            if done >= steps + 5:
                break
    rate = steps * batch / (time.perf_counter() - start)
    head = "1792-wide head" if config["geometric_head"] else "4096-wide head"
    print(f"python {kind} {config['hidden']} {config['blocks']}x{config['channels']} ({head}): {rate:.0f} samples/s")


def geometric_source(kind):
    """The head's index map, rebuilt in Python: compact output j feeds move index geometric[j]."""
    def geometric(i):
        f, t = divmod(i, 64)
        if f == t:
            return False
        df, dr = abs(t % 8 - f % 8), abs(t // 8 - f // 8)
        return df == 0 or dr == 0 or df == dr or (df, dr) in ((1, 2), (2, 1))
    dirs = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]
    knights = [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)]
    source = torch.empty(4096, dtype=torch.long)
    compact = [i for i in range(4096) if geometric(i)]
    for i in range(4096):
        if kind != "resnet":
            source[i] = compact.index(i) if geometric(i) else len(compact)
            continue
        source[i] = 4096
        if not geometric(i):
            continue
        f, t = divmod(i, 64)
        df, dr = t % 8 - f % 8, t // 8 - f // 8
        for d, (x, y) in enumerate(dirs):
            for k in range(1, 8):
                if (x * k, y * k) == (df, dr):
                    source[i] = (d * 7 + k - 1) * 64 + f
        for j, (x, y) in enumerate(knights):
            if (x, y) == (df, dr):
                source[i] = (56 + j) * 64 + f
    return source


if __name__ == "__main__":
    main(*sys.argv[1:])
