#!/usr/bin/env bash
# train_vs_python.sh DATASET.h5: samples/s of legalnet's C++ training loop against the
# predecessor's Python loop (TensorDataset + DataLoader), same models, batch 256, 2 threads,
# measured one after the other in one run; plus the C++ loader's overhead. mlp and conv are
# also run in Python with the predecessor's 4096-wide last layer.
set -euo pipefail
data=${1:?usage: train_vs_python.sh DATASET.h5}
bin=${BIN:-build/bin}
python=${PYTHON:-/usr/bin/python3}
steps=${STEPS:-40}
export OMP_WAIT_POLICY=PASSIVE
for model in "mlp 4096 0 0" "mlp 1024 0 0" "conv 1024 8 128" "conv 1024 4 64" "resnet 0 6 32" "resnet 0 6 64"; do
  "$bin/legalnet_train_bench" "$data" $model "$steps" 256 2
  "$python" "$(dirname "$0")/train_vs_python.py" "$data" $model "$steps" 256 2
  [[ $model == resnet* ]] || FULL_HEAD=1 "$python" "$(dirname "$0")/train_vs_python.py" "$data" $model "$steps" 256 2
done
