"""legalnet.Dataset in torch's DataLoader against h5py's raw read of the same columns, as ratios
measured in one run (issue 61). Each path reads the whole file once, cold (a new Dataset and
DataLoader each time, as an epoch of fresh workers):

- h5py: the columns Dataset reads (positions, legal_moves, castling, en_passant) in contiguous
  slices of 20,480 rows, nothing decoded: the floor;
- Dataset + DataLoader(batch_size=BATCH, shuffle=True), 0 workers: every row's inputs and
  4096-wide float targets built;
- the same with WORKERS workers (2 by default).

The bars: 0 workers >= 40% of h5py's rate, and WORKERS workers >= the 0-worker rate. The paths
run ROUNDS times in a rotating order and the medians are compared, so that a busy spell of a
shared machine does not land on one path only; each path's CPU seconds (the main process and
its workers) are printed beside its rate, the figure to read where other jobs share the cores.
--check exits with status 1 when a bar is missed. A timed result: it belongs here, not in the
tests (tests/python/test_dataset_workers.py checks the mechanism: whole chunks through a cache,
one batched fetch per batch).
Usage: dataset_vs_h5py.py DATASET.h5 [--inputs state] [--batch 512] [--workers 2] [--rounds 3] [--check]"""
import argparse
import os
import platform
import resource
import statistics
import sys
import time

import h5py
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import legalnet  # noqa: E402

SLICE = 20480
COLUMNS = ("positions", "legal_moves", "castling", "en_passant")  # what Dataset reads
BAR_VS_H5PY, BAR_WORKERS = 0.40, 1.0


def cpu_seconds():
    """CPU seconds of this process and of its children that have been waited for (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def h5py_raw(a):
    with h5py.File(a.dataset, "r") as f:
        columns = [f[name] for name in COLUMNS]
        n = len(columns[0])
        for start in range(0, n, SLICE):
            for column in columns:
                column[start:start + SLICE]
    return n


def data_loader(workers):
    def run(a):
        data = legalnet.Dataset(a.dataset, inputs=a.inputs)
        loader = torch.utils.data.DataLoader(data, batch_size=a.batch, shuffle=True, num_workers=workers)
        rows = 0
        for x, y in loader:
            rows += len(x)
        del loader  # its workers joined, so that their CPU time is counted
        return rows
    return run


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--inputs", default="state")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--check", action="store_true", help="exit with status 1 when a bar is missed")
    a = p.parse_args()
    paths = [("h5py, contiguous 20,480-row slices of the same columns (no decoding)", h5py_raw),
             ("Dataset + DataLoader, shuffle=True, 0 workers", data_loader(0)),
             (f"Dataset + DataLoader, shuffle=True, {a.workers} workers", data_loader(a.workers))]
    rates, cpu = {name: [] for name, _ in paths}, {name: [] for name, _ in paths}
    load_before = os.getloadavg()
    for r in range(a.rounds):
        for k in range(len(paths)):
            name, fn = paths[(r + k) % len(paths)]
            c0, t0 = cpu_seconds(), time.perf_counter()
            rows = fn(a)
            seconds = time.perf_counter() - t0
            rates[name].append(rows / seconds)
            cpu[name].append(cpu_seconds() - c0)
            print(f"  round {r + 1}: {name}: {rows / seconds:,.0f} rows/s", file=sys.stderr)
    load_after = os.getloadavg()
    with h5py.File(a.dataset, "r") as f:
        n = len(f["positions"])
    median = {name: statistics.median(v) for name, v in rates.items()}
    floor, none, some = (median[name] for name, _ in paths)
    print(f"{a.dataset}: {n:,} rows, inputs {a.inputs}, batch {a.batch}; median of {a.rounds} rounds; "
          f"{cpu_model()}, {os.cpu_count()} cores; torch {torch.__version__}; "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after\n")
    print("| path | rows/s | vs h5py | CPU s (main + workers) |\n|---|---|---|---|")
    for name, _ in paths:
        print(f"| {name} | {median[name]:,.0f} | {median[name] / floor:.0%} | {statistics.median(cpu[name]):.2f} |")
    checks = [(f"0 workers / h5py = {none / floor:.2f}", none / floor >= BAR_VS_H5PY, f">= {BAR_VS_H5PY:.2f}"),
              (f"{a.workers} workers / 0 workers = {some / none:.2f}", some / none >= BAR_WORKERS,
               f">= {BAR_WORKERS:.2f}")]
    print()
    for what, ok, bar in checks:
        print(f"{what} (bar {bar}): {'met' if ok else 'MISSED'}")
    if a.check and not all(ok for _, ok, _ in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
