#!/usr/bin/env bash
# train_vs_python.sh DATASET.h5: samples/s of legalnet's C++ training loop (fp32, bf16 and
# bf16 in both layouts on ready batches, the loaders, against this machine's compute peak) and of
# the predecessor's Python loop (TensorDataset + DataLoader) on the same models and inputs,
# train's batch (BATCH= overrides), 2 threads, measured one after the other in one run.
# MODELS="resnet 0 6 32" picks one model.
set -euo pipefail
data=${1:?usage: train_vs_python.sh DATASET.h5}
bin=${BIN:-build/bin}
python=${PYTHON:-$("$(dirname "$0")/../scripts/python-env")/bin/python}
steps=${STEPS:-40}
inputs=${INPUTS:-state}
# train's --batch-size default, as its --help gives it
batch=${BATCH:-$("$bin/train" --help | sed -n 's/.*--batch-size INT.*=\([0-9]*\)$/\1/p')}
# The C++ bench sets its own OpenMP waiting as the tools do (util/passive_openmp.cpp); Python
# gets PASSIVE as docs/python.md advises, and the same short spin as ours in a second fp32 run.
py() { OMP_WAIT_POLICY=PASSIVE "$python" "$(dirname "$0")/train_vs_python.py" "$@"; }
# MODELS="a b c d,e f g h" picks others than bench/models.txt's.
models=${MODELS:-$(grep -v '^#' "$(dirname "$0")/models.txt" | paste -sd, -)}
IFS=, read -ra model_list <<< "$models"
for model in "${model_list[@]}"; do
  # Python fp32 before and after the C++ loop: a shared machine's speed drifts over minutes.
  py "$data" $model "$steps" "$batch" 2 "$inputs"
  "$bin/legalnet_train_bench" "$data" $model "$steps" "$batch" 2 3 "$inputs"
  py "$data" $model "$steps" "$batch" 2 "$inputs"
  GOMP_SPINCOUNT=10000 py "$data" $model "$steps" "$batch" 2 "$inputs"
  PRECISION=bf16 py "$data" $model "$steps" "$batch" 2 "$inputs"
done
