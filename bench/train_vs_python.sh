#!/usr/bin/env bash
# train_vs_python.sh DATASET.h5: samples/s of legalnet's C++ training loop (fp32, bf16 and
# bf16 channels-last on ready batches, the loaders, against this machine's matmul peak) and of
# the predecessor's Python loop (TensorDataset + DataLoader) on the same models and inputs,
# batch 256, 2 threads, measured one after the other in one run.
set -euo pipefail
data=${1:?usage: train_vs_python.sh DATASET.h5}
bin=${BIN:-build/bin}
python=${PYTHON:-/usr/bin/python3}
steps=${STEPS:-40}
inputs=${INPUTS:-state}
export OMP_WAIT_POLICY=PASSIVE
for model in "resnet 0 6 32" "resnet 0 6 64" "attention 0 6 64" "mlp 4096 0 0" "conv 1024 4 64"; do
  "$bin/legalnet_train_bench" "$data" $model "$steps" 256 2 3 "$inputs"
  "$python" "$(dirname "$0")/train_vs_python.py" "$data" $model "$steps" 256 2 "$inputs"
  PRECISION=bf16 "$python" "$(dirname "$0")/train_vs_python.py" "$data" $model "$steps" 256 2 "$inputs"
done
