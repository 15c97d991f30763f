"""The floor for tensorize: what it costs h5py just to compress and store the same arrays
(gzip level 1 + shuffle, 1024-row chunks), and to read them back. CPU seconds beside wall
seconds: on a shared machine they are the figure to compare.
Usage: h5py_floor.py DATASET.h5 SCRATCH.h5"""
import sys
import time

import h5py

src, scratch = sys.argv[1], sys.argv[2]
with h5py.File(src, "r") as f:
    positions = f["positions"][:]
    masks = f["legal_moves"][:]
n = len(positions)
c0, t0 = time.process_time(), time.perf_counter()
with h5py.File(scratch, "w") as f:
    for name, data in (("positions", positions), ("legal_moves", masks)):
        f.create_dataset(name, data=data, chunks=(1024,) + data.shape[1:], compression="gzip",
                         compression_opts=1, shuffle=True)
t1, c1 = time.perf_counter(), time.process_time()
with h5py.File(scratch, "r") as f:
    f["positions"][:]
    f["legal_moves"][:]
t2 = time.perf_counter()
size = __import__("os").path.getsize(scratch)
print(f"h5py write: {n} positions, {t1 - t0:.2f} s, {n / (t1 - t0):,.0f} positions/s, {size / n:.1f} bytes/position; "
      f"{c1 - c0:.2f} s of CPU, {n / (c1 - c0):,.0f} positions per CPU-second")
print(f"h5py read:  {n / (t2 - t1):,.0f} positions/s")
