"""Where a Dataset batch's CPU time goes, in one process (time.process_time): decoding chunks
(inflating, finding the legal moves, the row checks), taking a batch's rows from the decoded
rows, building its float tensors, and the DataLoader worker's hand-over of the compact rows
(pickling them, and unpickling them into the tensors as the main process does). Medians over
40 random batches from the first 200 chunks.
Usage: dataset_batch_parts.py DATASET.h5 [--inputs state] [--batch 512]"""
import argparse
import os
import pickle
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from legalnet import dataset as D  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--inputs", default="state")
    p.add_argument("--batch", type=int, default=512)
    a = p.parse_args()
    torch.set_num_threads(1)
    reader = D._Reader(a.dataset)
    chunks = min(200, reader.chunks)
    t = time.process_time()
    rows = D._Rows.concat([reader.chunk(c) for c in range(chunks)])
    decode = (time.process_time() - t) / len(rows) * a.batch
    rng = np.random.default_rng(1)
    times = {"take": [], "encode": [], "pickle": [], "unpickle": []}
    for _ in range(40):
        idx = rng.integers(0, len(rows), a.batch)
        t = time.process_time()
        batch = rows.take(idx)
        times["take"].append(time.process_time() - t)
        t = time.process_time()
        batch.encode(a.inputs)
        times["encode"].append(time.process_time() - t)
        t = time.process_time()
        sent = pickle.dumps(D._CompactBatch(D._Items(batch, a.inputs)))
        times["pickle"].append(time.process_time() - t)
        t = time.process_time()
        pickle.loads(sent)
        times["unpickle"].append(time.process_time() - t)
    ms = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    print(f"{a.dataset}, {a.inputs}, batches of {a.batch} (ms of CPU a batch): decoding {decode * 1e3:.2f}, "
          f"taking {ms['take']:.2f}, building the floats {ms['encode']:.2f}, pickling the compact rows "
          f"{ms['pickle']:.3f} ({len(sent):,} bytes), unpickling them into the floats {ms['unpickle']:.2f}")


if __name__ == "__main__":
    main()
