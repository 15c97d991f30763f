#!/usr/bin/env bash
# submit.sh: the whole pipeline on a Slurm cluster as chained jobs:
#   data (array, one shard per task) -> merge -> train (+ evaluate), each after the previous
#   succeeded (--dependency=afterok). The held-out test set is made by one more data task.
# Environment: LEGALNET_BIN, DATA (shared filesystem), SHARDS (default 8), GAMES, SEED, the
# training job's resources TRAIN_TASKS (processes, default 1), TRAIN_GPUS (per node, default 1;
# 0 for CPU, with DEVICE=cpu), TRAIN_CPUS (per task, default 8), TRAIN_MEM (default 32G), and the
# train.sbatch variables. Extra sbatch options (partition, account) go in SBATCH_* variables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LEGALNET_BIN:?set LEGALNET_BIN to the folder of the legalnet tools}" "${DATA:?set DATA}"
export SHARDS=${SHARDS:-8} GAMES=${GAMES:-100000} SEED=${SEED:-1}
mkdir -p "$DATA"
data=$(sbatch --parsable --array=0-$((SHARDS - 1)) --export=ALL "$here/data.sbatch")
test_set=$(sbatch --parsable --export=ALL,GAMES=${TEST_GAMES:-2000},SEED=$((SEED + 1000003)) \
  --wrap "mkdir -p '$DATA/tensors' '$DATA/games' && '$LEGALNET_BIN/gen_moves' --games ${TEST_GAMES:-2000} --seed $((SEED + 1000003)) \
          --out '$DATA/games/test.pgn.zst' --quiet && '$LEGALNET_BIN/tensorize' --in '$DATA/games/test.pgn.zst' \
          --out '$DATA/tensors/test.h5' --quiet")
merge=$(sbatch --parsable --dependency=afterok:$data --export=ALL "$here/merge.sbatch")
resources=(--ntasks="${TRAIN_TASKS:-1}" --cpus-per-task="${TRAIN_CPUS:-8}" --mem="${TRAIN_MEM:-32G}")
((${TRAIN_GPUS:-1} > 0)) && resources+=(--gres=gpu:"${TRAIN_GPUS:-1}")
train=$(sbatch --parsable --dependency=afterok:$merge:$test_set "${resources[@]}" --export=ALL "$here/train.sbatch")
echo "submitted: data $data (array of $SHARDS), test set $test_set, merge $merge, train $train"
