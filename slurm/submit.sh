#!/usr/bin/env bash
# submit.sh: the whole pipeline on a Slurm cluster, the stages of `make -f Makefile.pipeline all`
# from the same recipe, as chained jobs (each after those it reads from succeeded: afterok):
#   data (array: the training shards, the placement and the lopsided games) -> merge -> train -> report
#   sets (the held-out test set and the position sets)  --------------------------^
# The files are make's, in DATA: games/, tensors/, positions/, runs/ARCH-CONFIG/, report/.
# The recipe is RECIPE, or recipes/$CONFIG.toml (CONFIG default gpu: make's CONFIG=gpu); each job
# reads it (slurm/recipe.sh), and a variable set in the environment overrides its value, by
# make's name (TRAIN_GAMES, SHARDS, SEED, STEPS, ...).
# Environment: LEGALNET_BIN, DATA (shared filesystem), RECIPE or CONFIG, LEGALNET_RUN (a command
# the tools run under, such as `apptainer exec --nv legalnet.sif`; docs/cluster.md); the training
# job's resources TRAIN_TASKS (processes, default 1), TRAIN_GPUS (per node, default 1; 0 for CPU,
# with DEVICE=cpu), TRAIN_CPUS (per task, default 8), TRAIN_MEM (default 32G), which the report
# job also gets (one task, one GPU unless TRAIN_GPUS is 0). Extra sbatch options (partition,
# account) go in SBATCH_* variables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/recipe.sh"
recipe_setup "$(dirname "$here")"
# The jobs run elsewhere: they find the repository and the recipe through these.
export LEGALNET_ROOT RECIPE LEGALNET_BIN DATA
mkdir -p "$DATA"
mapfile -t start_parts < <(recipe_start_parts)
last=$((SHARDS - 1 + ${#start_parts[@]}))
data=$(sbatch --parsable --array="0-$last" --export=ALL "$here/data.sbatch")
sets=$(sbatch --parsable --export=ALL "$here/sets.sbatch")
merge=$(sbatch --parsable --dependency="afterok:$data" --export=ALL "$here/merge.sbatch")
gpus=${TRAIN_GPUS:-1} cpus=${TRAIN_CPUS:-8} memory=${TRAIN_MEM:-32G}
resources=(--ntasks="${TRAIN_TASKS:-1}" --cpus-per-task="$cpus" --mem="$memory")
((gpus > 0)) && resources+=(--gres=gpu:"$gpus")
train=$(sbatch --parsable --dependency="afterok:$merge" "${resources[@]}" --export=ALL "$here/train.sbatch")
resources=(--ntasks=1 --cpus-per-task="$cpus" --mem="$memory")
((gpus > 0)) && resources+=(--gres=gpu:1)
report=$(sbatch --parsable --dependency="afterok:$train:$sets" "${resources[@]}" --export=ALL "$here/report.sbatch")
echo "submitted: data $data (array 0-$last), sets $sets, merge $merge, train $train, report $report" \
  "(recipe $RECIPE; report in $REPORT, model in $RUN)"
