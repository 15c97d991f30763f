#!/usr/bin/env bash
# submit.sh: the whole pipeline on a Slurm cluster as chained jobs:
#   data (array, one shard per task) -> merge -> train (+ evaluate), each after the previous
#   succeeded (--dependency=afterok). The held-out test set is made by one more data task.
# Environment: LEGALNET_BIN, DATA (shared filesystem), SHARDS (default 8), GAMES, SEED, and the
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
train=$(sbatch --parsable --dependency=afterok:$merge:$test_set --export=ALL "$here/train.sbatch")
echo "submitted: data $data (array of $SHARDS), test set $test_set, merge $merge, train $train"
