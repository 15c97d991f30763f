#!/usr/bin/env bash
# submit.sh: the whole pipeline on a Slurm cluster as chained jobs:
#   data (array, one shard per task) -> merge -> train (+ evaluate), each after the previous
#   succeeded (--dependency=afterok). The held-out test set is made by one more data task.
# The jobs follow one recipe, RECIPE (default recipes/gpu.toml, as make's CONFIG=gpu): train and
# evaluate read their sections of it (train.sbatch), and the data takes its [pipeline]
# TRAIN_GAMES and TEST_GAMES and its [train] seed (the cluster path makes the recipe's standard
# games only: no placement games, final positions or position sets; docs/cluster.md).
# Environment: LEGALNET_BIN, DATA (shared filesystem), RECIPE, SHARDS (default 8), and over the
# recipe GAMES (its TRAIN_GAMES), TEST_GAMES, SEED; the training job's resources TRAIN_TASKS
# (processes, default 1), TRAIN_GPUS (per node, default 1; 0 for CPU, with DEVICE=cpu),
# TRAIN_CPUS (per task, default 8), TRAIN_MEM (default 32G), and the train.sbatch variables.
# Extra sbatch options (partition, account) go in SBATCH_* variables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${LEGALNET_BIN:?set LEGALNET_BIN to the folder of the legalnet tools}" "${DATA:?set DATA}"
RECIPE=${RECIPE:-$here/../recipes/gpu.toml}
[[ -f $RECIPE ]] || { echo "submit.sh: no recipe $RECIPE" >&2; exit 1; }
RECIPE=$(realpath "$RECIPE")  # the jobs run elsewhere
export RECIPE
# recipe_value SECTION KEY: KEY's value in [SECTION] of the recipe (a bare word or a quoted string).
recipe_value() {
  awk -v section="[$1]" -v key="$2" '
    /^[ \t]*\[/ { here = ($1 == section); next }
    here { line = $0; sub(/#.*/, "", line); eq = index(line, "="); name = substr(line, 1, eq - 1); gsub(/[ \t]/, "", name)
           if (eq && name == key) { value = substr(line, eq + 1); gsub(/[ \t"]/, "", value); print value; exit } }' "$RECIPE"
}
export SHARDS=${SHARDS:-8} GAMES=${GAMES:-$(recipe_value pipeline TRAIN_GAMES)}
test_games=${TEST_GAMES:-$(recipe_value pipeline TEST_GAMES)} seed=${SEED:-$(recipe_value train seed)}
[[ -n $GAMES && -n $test_games && -n $seed ]] || { echo "submit.sh: $RECIPE lacks TRAIN_GAMES, TEST_GAMES or seed" >&2; exit 1; }
mkdir -p "$DATA"
data=$(sbatch --parsable --array=0-$((SHARDS - 1)) --export=ALL,SEED=$seed "$here/data.sbatch")
test_set=$(sbatch --parsable --export=ALL \
  --wrap "mkdir -p '$DATA/tensors' '$DATA/games' && '$LEGALNET_BIN/gen_moves' --games $test_games --seed $((seed + 1000003)) \
          --out '$DATA/games/test.pgn.zst' --quiet && '$LEGALNET_BIN/tensorize' --in '$DATA/games/test.pgn.zst' \
          --out '$DATA/tensors/test.h5' --quiet")
merge=$(sbatch --parsable --dependency=afterok:$data --export=ALL "$here/merge.sbatch")
resources=(--ntasks="${TRAIN_TASKS:-1}" --cpus-per-task="${TRAIN_CPUS:-8}" --mem="${TRAIN_MEM:-32G}")
((${TRAIN_GPUS:-1} > 0)) && resources+=(--gres=gpu:"${TRAIN_GPUS:-1}")
train=$(sbatch --parsable --dependency=afterok:$merge:$test_set "${resources[@]}" --export=ALL "$here/train.sbatch")
echo "submitted: data $data (array of $SHARDS), test set $test_set, merge $merge, train $train (recipe $RECIPE)"
