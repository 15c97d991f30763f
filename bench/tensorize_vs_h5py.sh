#!/usr/bin/env bash
# tensorize_vs_h5py.sh [GAMES]: in one run, tensorize on one core and on two threads against
# h5py storing the same arrays (the floor), and reading our file back with h5py. CPU seconds
# beside the rates: on a shared machine they are the figures to compare. PYTHON: a Python with
# h5py (the project's environment by default); BIN: the tools.
set -euo pipefail
games=${1:-3000}
bin=${BIN:-build/bin}
python=${PYTHON:-$("$(dirname "$0")/../scripts/python-env")/bin/python}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin/gen_moves" --games "$games" --seed 1 --out "$dir/g.pgn" --quiet
echo "== tensorize, one core (taskset -c 0, --threads 1)"
/usr/bin/time -f "CPU %U s user + %S s system" taskset -c 0 "$bin/tensorize" --in "$dir/g.pgn" --out "$dir/t1.h5" \
  --threads 1 2>&1 | grep -v "^  "
echo "== tensorize, --threads 2"
/usr/bin/time -f "CPU %U s user + %S s system" "$bin/tensorize" --in "$dir/g.pgn" --out "$dir/t2.h5" --threads 2 2>&1 |
  grep -v "^  "
echo "== h5py floor (same arrays, gzip 1 + shuffle, 1024-row chunks)"
"$python" "$(dirname "$0")/h5py_floor.py" "$dir/t1.h5" "$dir/floor.h5"
echo "== h5py reading tensorize's file (256-row chunks)"
"$python" - "$dir/t1.h5" <<'PY'
import sys, time, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    n = f["positions"].shape[0]
    t0 = time.perf_counter(); f["positions"][:]; f["legal_moves"][:]; t1 = time.perf_counter()
    print(f"sequential, whole datasets: {n / (t1 - t0):,.0f} positions/s")
    rng = np.random.default_rng(0)
    t0 = time.perf_counter(); rows = 0
    for _ in range(20):
        idx = np.sort(rng.choice(n, 256, replace=False))
        f["positions"][idx]; f["legal_moves"][idx]; rows += 256
    t1 = time.perf_counter()
    print(f"random batches of 256 rows (fancy indexing): {rows / (t1 - t0):,.0f} positions/s")
PY
