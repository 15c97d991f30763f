#!/usr/bin/env bash
# python_loop_vs_train.sh TRAIN.h5 TEST.h5 [STEPS]: docs/python.md's training loop
# (bench/python_train_loop.py) and `train` at equal steps, batch and learning-rate schedule
# (resnet 6x32, state inputs, fp32, 2 threads, train's default weights of 1), then `evaluate`
# on the same held-out rows and games for both. BIN: the tools; PYTHON: the project's Python.
set -euo pipefail
train_h5=$1 test_h5=$2 steps=${3:-3000}
bin=${BIN:-build/bin}
python=${PYTHON:-$("$(dirname "$0")/../scripts/python-env")/bin/python}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMP_WAIT_POLICY=PASSIVE
echo "== python loop, $steps steps"
/usr/bin/time -f "%e s, CPU %U s user + %S s system" "$python" "$(dirname "$0")/python_train_loop.py" \
  "$train_h5" "$dir/python.safetensors" --steps "$steps" --threads 2 --seed 1 2>&1 | tail -2
echo "== train, $steps steps"
/usr/bin/time -f "%e s, CPU %U s user + %S s system" "$bin/train" --data "$train_h5" --out "$dir/run" \
  --arch resnet --blocks 6 --channels 32 --inputs state --batch-size 256 --lr 2e-3 --max-steps "$steps" \
  --precision fp32 --threads 2 --seed 1 --quiet 2>&1 | tail -2
for m in python run/model; do
  echo "== evaluate $m"
  "$bin/evaluate" --model "$dir/$m.safetensors" --data "$test_h5" --max-positions 50000 --games 200 \
    --seed 1 --threads 2 --precision fp32 --report "$dir/$m.json" --quiet >/dev/null
  "$python" - "$dir/$m.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d, g = r["dataset"], r["games"]
print(json.dumps({k: d.get(k) for k in ("positions", "bce", "precision", "recall", "f1", "exact_set_accuracy")}))
print(json.dumps({k: g.get(k) for k in ("games", "illegal_rate_per_pick", "illegal_rate_in_check", "clean_games_share", "mean_plies_before_first_illegal")}))
PY
done
