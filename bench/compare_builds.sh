#!/usr/bin/env bash
# compare_builds.sh DATASET.h5 BUILD_DIR... : the default model's training step (resnet 6x32,
# state inputs, batch 256, 2 threads; legalnet_train_bench's variants) in each build, the builds
# taking turns for ROUNDS rounds so that a shared machine's drift lands on all of them alike.
# Used to choose the pinned libtorch (docs/benchmarks.md, "Choosing the libtorch").
# MODEL="resnet 0 6 32" STEPS=40 ROUNDS=3 override.
set -euo pipefail
data=${1:?usage: compare_builds.sh DATASET.h5 BUILD_DIR...}
shift
model=${MODEL:-"resnet 0 6 32"}
steps=${STEPS:-40}
rounds=${ROUNDS:-3}
for ((r = 1; r <= rounds; ++r)); do
  for build in "$@"; do
    echo "== round $r: $build ($("$build/bin/train" --version 2>/dev/null | tr '\n' ' '))"
    # One round of the bench's variants each time: the rounds here do the alternation.
    "$build/bin/legalnet_train_bench" "$data" $model "$steps" 256 2 1 state
  done
done
