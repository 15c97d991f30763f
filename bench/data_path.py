"""The data path from a dataset file to training batches, in one run on one machine, each path
one epoch over the file (cold: a new reader each time, as an epoch of fresh DataLoader workers):

- h5py reading positions and legal_moves in contiguous slices of 20,480 rows, nothing decoded
  (the floor every reader is measured against);
- legalnet.Dataset in torch's DataLoader (batch BATCH, shuffle=True), 0 and 2 workers;
- the same with BlockShuffleSampler (chunk-sized blocks shuffled, as train's stream mode);
- legalnet.BatchReader (its first batch's latency too);
- train's loaders alone, from legalnet_loader_bench (BIN): reading the file into memory, an
  epoch of batches from memory, an epoch streamed from the file.

Every path but h5py's builds the inputs and 4096-wide float targets of every row. The paths run
ROUNDS times in a rotating order and the median of each is reported with its ratio to h5py's, so
that a busy spell of a shared machine does not land on one path only.
Usage: data_path.py DATASET.h5 [--inputs state] [--batch 512] [--rounds 3] [--bin build/bin]"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import h5py
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import legalnet  # noqa: E402

SLICE = 20480


def h5py_raw(a):
    with h5py.File(a.dataset, "r") as f:
        n = len(f["positions"])
        t0 = time.perf_counter()
        for start in range(0, n, SLICE):
            f["positions"][start:start + SLICE]
            f["legal_moves"][start:start + SLICE]
        return n / (time.perf_counter() - t0)


def data_loader(workers, blocks):
    def run(a):
        t0 = time.perf_counter()
        data = legalnet.Dataset(a.dataset, inputs=a.inputs)
        sampler = legalnet.BlockShuffleSampler(data, workers=max(1, workers), batch_size=a.batch) if blocks else None
        loader = torch.utils.data.DataLoader(data, batch_size=a.batch, shuffle=not blocks, sampler=sampler,
                                             num_workers=workers)
        rows = sum(len(x) for x, _ in loader)
        return rows / (time.perf_counter() - t0)
    return run


def batch_reader(a):
    t0 = time.perf_counter()
    rows, first = 0, None
    for x, _ in legalnet.BatchReader(a.dataset, inputs=a.inputs, batch_size=a.batch):
        first = first or time.perf_counter() - t0
        rows += len(x)
    a.first_batch.append(first)
    return rows / (time.perf_counter() - t0)


def cpp_loaders(a):
    run = subprocess.run([os.path.join(a.bin, "legalnet_loader_bench"), a.dataset, str(a.batch), a.inputs],
                         capture_output=True, text=True, check=True)
    for line in run.stdout.splitlines():
        name, rows, seconds = line.split()
        a.cpp.setdefault(name, []).append(int(rows) / float(seconds))
    return None


PATHS = [
    ("h5py, contiguous 20,480-row slices (no decoding)", h5py_raw),
    ("Dataset + DataLoader, shuffle=True, 0 workers", data_loader(0, False)),
    ("Dataset + DataLoader, shuffle=True, 2 workers", data_loader(2, False)),
    ("Dataset + DataLoader, BlockShuffleSampler, 0 workers", data_loader(0, True)),
    ("Dataset + DataLoader, BlockShuffleSampler, 2 workers", data_loader(2, True)),
    ("BatchReader (prefetch thread, 2 inflating threads)", batch_reader),
    ("train's loaders (legalnet_loader_bench)", cpp_loaders),
]
CPP_NAMES = {"cpp_load_positions": "train --data-mode memory: reading the file into memory",
             "cpp_memory_batches": "train --data-mode memory: batches from rows in memory",
             "cpp_stream_batches": "train --data-mode stream: batches streamed from the file"}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--inputs", default="state")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--bin", default=os.environ.get("BIN", "build/bin"))
    a = p.parse_args()
    a.first_batch, a.cpp = [], {}
    paths = [q for q in PATHS if q[1] is not cpp_loaders or os.path.exists(os.path.join(a.bin, "legalnet_loader_bench"))]
    rates = {name: [] for name, _ in paths}
    for r in range(a.rounds):
        for k in range(len(paths)):
            name, fn = paths[(r + k) % len(paths)]
            rate = fn(a)
            if rate is not None:
                rates[name].append(rate)
            print(f"  round {r + 1}: {name}: " + (f"{rate:,.0f} rows/s" if rate else "done"), file=sys.stderr)
    with h5py.File(a.dataset, "r") as f:
        n = len(f["positions"])
    floor = statistics.median(rates[paths[0][0]])
    print(f"{a.dataset}: {n:,} rows, inputs {a.inputs}, batch {a.batch}; median of {a.rounds} rounds "
          f"(torch {torch.__version__}, {os.cpu_count()} cores)\n")
    print("| path | rows/s | vs h5py |\n|---|---|---|")
    results = [(name, statistics.median(v)) for name, v in rates.items() if v]
    results += [(CPP_NAMES.get(k, k), statistics.median(v)) for k, v in a.cpp.items()]
    for name, rate in results:
        print(f"| {name} | {rate:,.0f} | {rate / floor:.0%} |")
    if a.first_batch:
        print(f"\nBatchReader's first batch: {statistics.median(a.first_batch):.2f} s after it was made (median)")


if __name__ == "__main__":
    main()
