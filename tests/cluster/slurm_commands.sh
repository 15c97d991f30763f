#!/usr/bin/env bash
# slurm_commands.sh SOURCE_DIR [PYTHON]: the Slurm path runs what `make -f Makefile.pipeline all`
# runs, from the same recipe, so that the two cannot drift apart. No Slurm and no tools needed:
#   1. slurm/recipe.sh's lists are Makefile.pipeline's (PIPELINE_VARIABLES, RECIPE_OPTIONS), it
#      reads every recipe of recipes/ to the values make reads (make print-VARIABLE), and refuses
#      the malformed recipes make refuses, with make's message;
#   2. for each recipe, and for one with variables given in the environment, `make all` and
#      slurm/submit.sh run with fake tools (tests/cluster/fake/tool records each call; make's
#      build step is a fake cmake) and a fake sbatch/srun that runs each job at once, as Slurm
#      would; tests/cluster/compare_commands.py then requires the same tool calls on both sides
#      (the merged shards counting as make's one tensorize), and that every file a job reads
#      comes from a job it depends on (afterok).
set -euo pipefail
source_dir=$(realpath "$1")
python=${2:-python3}
here=$(cd "$(dirname "$0")" && pwd)
unset "${!SLURM_@}" RECIPE CONFIG DATA LEGALNET_BIN LEGALNET_ROOT LEGALNET_RUN  # a CI job on a cluster
unset MAKEFLAGS MFLAGS MAKELEVEL  # `make test STEPS=...`: its variables are not this test's
work=$(realpath "$(mktemp -d /tmp/legalnet-slurm-commands.XXXXXX)")
if [[ -n ${LEGALNET_KEEP_TEST_FILES:-} ]]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
fail() {
  echo "FAILED: $*"
  exit 1
}

# The repository as make and the jobs see it, but for the scripts the report calls and the
# Python environment: links to the source, and fakes.
repo=$work/repo
mkdir -p "$repo/scripts" "$work/build/bin" "$work/venv/bin"
for entry in "$source_dir"/*; do [[ ${entry##*/} == scripts ]] || ln -s "$entry" "$repo/"; done
for entry in "$source_dir"/scripts/*; do ln -s "$entry" "$repo/scripts/"; done
for name in plot-metrics report-html; do ln -sf "$here/fake/tool" "$repo/scripts/$name"; done
rm "$repo/scripts/install-deps" "$repo/scripts/python-env"
printf '#!/bin/sh\nexit 0\n' >"$repo/scripts/install-deps"
printf '#!/bin/sh\necho %s\n' "$work/venv" >"$repo/scripts/python-env"
printf '#!/bin/sh\nexec "$@"\n' >"$work/venv/bin/python"
chmod +x "$repo/scripts/install-deps" "$repo/scripts/python-env" "$work/venv/bin/python"
for name in gen_moves tensorize train evaluate; do ln -s "$here/fake/tool" "$work/build/bin/$name"; done
touch "$work/build/build.ninja"
export PATH=$here/fake:$PATH  # sbatch, srun, scontrol, cmake

# ---- 1. the lists and the reader -------------------------------------------------------------
make_print() {  # make_print RECIPE VARIABLE...: make's values, one a line
  local recipe=$1
  shift
  (cd "$repo" && make -s -f Makefile.pipeline RECIPE="$recipe" DATA=/data "${@/#/print-}")
}
slurm_print() {  # slurm_print RECIPE VARIABLE...: slurm/recipe.sh's
  (cd "$repo" && RECIPE=$1 DATA=/data LEGALNET_BIN=/bin bash -c '
    source slurm/recipe.sh && recipe_setup "$PWD" && shift && for v; do printf "%s\n" "${!v}"; done' recipe "$@")
}
squeeze() { tr -s ' \n' '  ' <<<"$1" | sed 's/^ //; s/ $//'; }
[[ $(squeeze "$(make_print recipes/default.toml PIPELINE_VARIABLES)") == \
  $(squeeze "$(source "$source_dir/slurm/recipe.sh" && echo "$RECIPE_PIPELINE_VARIABLES")") ]] ||
  fail "slurm/recipe.sh's RECIPE_PIPELINE_VARIABLES is not Makefile.pipeline's PIPELINE_VARIABLES"
[[ $(squeeze "$(make_print recipes/default.toml RECIPE_OPTIONS)") == \
  $(squeeze "$(source "$source_dir/slurm/recipe.sh" && echo "$RECIPE_OPTIONS")") ]] ||
  fail "slurm/recipe.sh's RECIPE_OPTIONS is not Makefile.pipeline's"
read -ra variables <<<"$(source "$source_dir/slurm/recipe.sh" && echo "$RECIPE_PIPELINE_VARIABLES")"
variables+=(SEED ARCH CONFIG TEST_SEED PLACEMENT_SEED LOPSIDED_SEED RUN REPORT)
recipes=("$source_dir"/recipes/*.toml)
for recipe in "${recipes[@]}"; do
  recipe=recipes/${recipe##*/}
  expected=$(make_print "$recipe" "${variables[@]}") || fail "make cannot read $recipe"
  got=$(slurm_print "$recipe" "${variables[@]}") || fail "slurm/recipe.sh cannot read $recipe"
  [[ $got == "$expected" ]] || fail "$recipe: slurm/recipe.sh reads
$(paste -d' ' <(printf '%s\n' "${variables[@]}") <(echo "$got") <(echo "$expected") | awk '$2 != $3 {print "  " $1 " = " $2 ", make: " $3}')"
done
echo "ok: slurm/recipe.sh reads ${#recipes[@]} recipes as make does"

# Malformed recipes: both refuse them, with the same message.
mkdir -p "$work/bad"
good=$(cat "$source_dir/recipes/default.toml")
bad() { printf '%s\n' "$2" >"$work/bad/$1.toml"; }
bad section "$good"$'\n[gen_moves]\nthreads = 2'
bad pipeline-key "[pipeline]"$'\nSTEPS = 3\n'"$good"
bad two-seeds "${good/$'[evaluate]\n'/$'[evaluate]\nseed = 2\n'}"
bad no-value "[pipeline]"$'\nTRAIN_GAMES =\n'
bad character "[pipeline]"$'\nTRAIN_GAMES = 1;2\n'
bad open-string "[pipeline]"$'\nEXHAUSTIVE_MATERIAL = "?\n'
bad outside $'TRAIN_GAMES = 1\n'"$good"
bad twice "${good/TRAIN_GAMES = /TRAIN_GAMES = 1$'\n'TRAIN_GAMES = }"
bad no-equals "${good/TRAIN_GAMES = /TRAIN_GAMES }"
bad missing "$(grep -v '^SHARDS' <<<"$good")"
for recipe in "$work"/bad/*.toml; do
  expected=$(make_print "$recipe" SEED 2>&1) && fail "make reads the malformed ${recipe##*/}"
  got=$(slurm_print "$recipe" SEED 2>&1) && fail "slurm/recipe.sh reads the malformed ${recipe##*/}: $got"
  expected=$(sed -E 's/^[^ ]*Makefile.pipeline:[0-9]+: \*\*\* //; s/\.  Stop\.$//' <<<"$expected")
  got=${got#recipe: }
  [[ $got == "$expected" ]] || fail "${recipe##*/}: slurm/recipe.sh says
  $got
make says
  $expected"
done
echo "ok: slurm/recipe.sh refuses $(find "$work/bad" -name '*.toml' | wc -l) malformed recipes with make's messages"

# ---- 2. the jobs' command lines against make's ---------------------------------------------------
compare() {  # compare NAME VARIABLE=VALUE...: make all and slurm/submit.sh in that environment
  local name=$1 case=$work/case-$1
  shift
  mkdir -p "$case/make-log" "$case/slurm-log" "$case/submit"
  : >"$case/jobs"
  (cd "$repo" && env "$@" FAKE_LOG="$case/make-log" \
    make -f Makefile.pipeline all -o deps BUILD="$work/build" DATA="$case/make-data" >"$case/make.out" 2>&1) ||
    fail "$name: make all: $(tail -n 20 "$case/make.out")"
  (cd "$case/submit" && env "$@" FAKE_LOG="$case/slurm-log" FAKE_JOBS="$case/jobs" LEGALNET_BIN="$work/build/bin" \
    DATA="$case/slurm-data" "$repo/slurm/submit.sh" >"$case/submit.out" 2>&1) ||
    fail "$name: slurm/submit.sh: $(tail -n 30 "$case/submit.out")"
  [[ -f $case/slurm-data/report/report.html && -f $case/slurm-data/report/summary.txt ]] ||
    fail "$name: the Slurm jobs made no report"
  echo -n "$name: "
  "$python" "$here/compare_commands.py" "$case/make-log" "$case/slurm-log" "$case/jobs" \
    "$case/make-data=DATA" "$case/slurm-data=DATA" "$repo/=" "$source_dir/=" || fail "$name: see above"
}
for recipe in "${recipes[@]}"; do
  config=${recipe##*/}
  compare "${config%.toml}" CONFIG="${config%.toml}"
done
# Variables given in the environment, data and training: no placement games (the lopsided games
# take their array task) or final positions,
# no exhaustive class, another seed, array size and shards.
compare overrides CONFIG=smoke SEED=5 TRAIN_GAMES=30 SHARDS=3 PLACEMENT_GAMES=0 TRAIN_FINAL_POSITIONS=0 \
  EXHAUSTIVE_MATERIAL= SAMPLED_POSITIONS=0 STEPS=7 BLOCKS=2 DEVICE=cpu EVAL_GAMES=3 SEARCH_BUDGET=10
compare recipe-file RECIPE="$repo/recipes/quality.toml" OOD_DEPTH=1 EXHAUSTIVE_MATERIAL=Q TEST_SEED=99
