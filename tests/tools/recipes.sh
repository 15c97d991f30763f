#!/usr/bin/env bash
# recipes.sh BIN_DIR SOURCE_DIR: one recipe per preset (recipes/*.toml), written once (issue 59).
# (a) For each recipe, the train and evaluate commands `make -f Makefile.pipeline all` runs
#     restate no value (the recipe's file, the files and --threads only), resolve to exactly the
#     options of `train --config RECIPE --data ... --out ...` by hand (--print-config), and make's
#     variables (help, stamps) hold the values the tools read from the recipe; each variable given
#     to make reaches its option. Every tool accepts every recipe (its own section, the others
#     skipped), and a tiny run trains with the recipe's values.
# (b) train's and evaluate's built-in defaults against recipes/default.toml: the options where they
#     differ are printed and must be the deliberate ones listed below (a new drift fails).
# (c) Every variable a recipe sets is one make lists and takes; a [pipeline] key the Makefile does
#     not know, a section make does not read, two values for one make variable, a missing data
#     variable and an unknown CONFIG fail with one clear message. Under a minute (about 20 s).
set -uo pipefail
shopt -s extglob
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
source "$(dirname "$0")/checks.sh"
build=$(dirname "$bin")
[[ $build/bin == "$bin" ]] || { echo "FAIL: BIN_DIR is not BUILD/bin: $bin"; exit 1; }
export OMP_NUM_THREADS=1

# The options train and evaluate take from make's variables (Makefile.pipeline's RECIPE_OPTIONS).
train_map=(ARCH=arch BLOCKS=blocks CHANNELS=channels HIDDEN=hidden HEADS=heads MIXING=mixing POLICY_HEAD=policy-head
  INPUTS=inputs TRAIN_PLY_LIMIT=position-ply-limit CHECK_WEIGHT=check-weight RARE_WEIGHT=rare-weight PIN_WEIGHT=pin-weight
  RULES_WEIGHT=rules-weight
  BATCH=batch-size LR=lr STEPS=max-steps TIME_BUDGET=time-budget SEED=seed DEVICE=device PRECISION=precision)
evaluate_map=(EVAL_GAMES=games ADVERSARY_GAMES=adversary-games SEARCH_STARTS=search-starts SEARCH_BUDGET=search-budget
  RANDOM_EDIT_BUDGET=random-edit-budget EVAL_POSITIONS=max-positions SEED=seed DEVICE=device PRECISION=precision)
# Values unlike every recipe's, one per variable, for the overrides.
overrides=(ARCH=mlp BLOCKS=3 CHANNELS=16 HIDDEN=64 HEADS=2 MIXING=lines POLICY_HEAD=types INPUTS=planes TRAIN_PLY_LIMIT=50
  CHECK_WEIGHT=2 RARE_WEIGHT=3 PIN_WEIGHT=5 RULES_WEIGHT=2 BATCH=64 LR=0.005 STEPS=7 TIME_BUDGET=2 SEED=9 DEVICE=cpu PRECISION=fp32
  EVAL_GAMES=5 ADVERSARY_GAMES=6 SEARCH_STARTS=7 SEARCH_BUDGET=50 RANDOM_EDIT_BUDGET=30 EVAL_POSITIONS=100)

# make with a clean environment (a variable in the test's environment would count as given).
pipeline() { (cd "$src" && env -i PATH="$PATH" HOME="$work" make -s -f Makefile.pipeline BUILD="$build" "$@" 2>&1); }

# value FILE KEY: KEY's value in a --print-config listing, unquoted ("" where absent).
value() { sed -n "s/^$2 = //p" "$1" | sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'$/\1/"; }

# The command of `make -n` for TOOL (train or evaluate), continuation lines joined, from the
# tool's path up to a redirection.
command_of() {
  awk '{ if (sub(/\\$/, "")) { line = line $0; next } print line $0; line = "" }' "$1" |
    grep -o -- "$bin/$2 --config [^>]*" | head -1
}

# options_of COMMAND: its option names (--x), one a line.
options_of() { grep -oE -- "(^| )--[a-z][a-z0-9-]*" <<<"$1" | tr -d ' ' | sort -u; }

recipes=("$src"/recipes/*.toml)
((${#recipes[@]} >= 4)) || fail "recipes/ holds ${#recipes[@]} recipes, expected default, quality, gpu and smoke"

for recipe in "${recipes[@]}"; do
  name=$(basename "$recipe" .toml)
  rel=recipes/$name.toml
  data=$work/data-$name
  # Every tool reads the recipe: its own section's keys all name options, the others are skipped.
  for tool in gen_moves tensorize train evaluate; do
    "$bin/$tool" --config "$recipe" --print-config > "$work/$name.$tool" 2> "$work/err" ||
      fail "$tool --config $rel: $(cat "$work/err")"
  done

  # (a) make's commands: the recipe, the files, --threads; nothing restated.
  pipeline -n all CONFIG="$name" DATA="$data" > "$work/$name.n" || { fail "make -n all CONFIG=$name: $(cat "$work/$name.n")"; continue; }
  train_cmd=$(command_of "$work/$name.n" train)
  evaluate_cmd=$(command_of "$work/$name.n" evaluate)
  [[ -n $train_cmd && -n $evaluate_cmd ]] || { fail "make -n all CONFIG=$name runs no train or evaluate --config"; continue; }
  [[ $train_cmd == "$bin/train --config $rel "* ]] || fail "make's train does not read $rel: $train_cmd"
  extra=$(options_of "$train_cmd" | grep -vxE -- '--(config|data|out|force|threads)')
  [[ -z $extra ]] || fail "make's train restates the recipe (CONFIG=$name): $(echo $extra)"
  extra=$(options_of "$evaluate_cmd" |
    grep -vxE -- '--(config|model|data|positions|search|threads|fen|picture|gallery|report|model-card)')
  [[ -z $extra ]] || fail "make's evaluate restates the recipe (CONFIG=$name): $(echo $extra)"

  # ... and resolves to what the tool by hand resolves to, but --force and --threads.
  (cd "$src" && picture=p.png && eval "$train_cmd --print-config") > "$work/$name.make-train" 2>&1 ||
    fail "make's train --print-config: $(cat "$work/$name.make-train")"
  (cd "$src" && "$bin/train" --config "$rel" --data "$data/tensors/train.h5" --out "$data/runs/resnet-$name" --print-config) \
    > "$work/$name.hand-train" 2>&1 || fail "train --config $rel by hand: $(cat "$work/$name.hand-train")"
  if ! diff <(grep -vE '^(force|threads) = ' "$work/$name.make-train") <(grep -vE '^(force|threads) = ' "$work/$name.hand-train") \
      > "$work/diff"; then
    fail "CONFIG=$name: make's train and train --config $rel by hand differ: $(cat "$work/diff")"
  fi
  (cd "$src" && picture=p.png && eval "$evaluate_cmd --print-config") > "$work/$name.make-evaluate" 2>&1 ||
    fail "make's evaluate --print-config: $(cat "$work/$name.make-evaluate")"
  for pair in "${evaluate_map[@]}"; do
    key=${pair#*=}
    [[ $(value "$work/$name.make-evaluate" "$key") == $(value "$work/$name.evaluate" "$key") ]] ||
      fail "CONFIG=$name: make's evaluate has $key $(value "$work/$name.make-evaluate" "$key"), the recipe $(value "$work/$name.evaluate" "$key")"
  done

  # make's variables (help, the stamps) hold the values train and evaluate read from the recipe.
  # (One make for all: a goal named twice runs once, so each variable is asked for once.)
  variables=($(printf '%s\n' "${train_map[@]%%=*}" "${evaluate_map[@]%%=*}" | sort -u))
  mapfile -t values < <(pipeline CONFIG="$name" "${variables[@]/#/print-}")
  declare -A made=()
  for i in "${!variables[@]}"; do made[${variables[$i]}]=${values[$i]-}; done
  for tool in train evaluate; do
    map=("${train_map[@]}")
    [[ $tool == evaluate ]] && map=("${evaluate_map[@]}")
    for pair in "${map[@]}"; do
      variable=${pair%%=*} key=${pair#*=}
      want=$(value "$work/$name.$tool" "$key")
      [[ ${made[$variable]-} == "$want" ]] ||
        fail "CONFIG=$name: make's $variable is '${made[$variable]-}', $tool reads $key = '$want' from $rel"
    done
  done
  help=$(pipeline help CONFIG="$name")
  grep -qE "^  BLOCKS +$(value "$work/$name.train" blocks)\$" <<<"$help" ||
    fail "make help CONFIG=$name does not show the recipe's blocks: $help"

  # Each variable given to make reaches its option (and only then is the option on the line).
  pipeline -n all CONFIG="$name" DATA="$data-given" "${overrides[@]}" > "$work/$name.given" ||
    { fail "make -n all with overrides: $(cat "$work/$name.given")"; continue; }
  for tool in train evaluate; do
    cmd=$(command_of "$work/$name.given" $tool)
    (cd "$src" && picture=p.png && eval "$cmd --print-config") > "$work/$name.given-$tool" 2>&1 ||
      fail "make's $tool with overrides: $(cat "$work/$name.given-$tool")"
    map=("${train_map[@]}")
    [[ $tool == evaluate ]] && map=("${evaluate_map[@]}")
    for pair in "${map[@]}"; do
      variable=${pair%%=*} key=${pair#*=}
      for given in "${overrides[@]}"; do
        [[ ${given%%=*} == "$variable" ]] || continue
        [[ $(value "$work/$name.given-$tool" "$key") == "${given#*=}" ]] ||
          fail "CONFIG=$name $given: make's $tool has $key = $(value "$work/$name.given-$tool" "$key")"
      done
    done
  done
done

# A tiny run by hand from the default recipe: its values reach the run (options.json).
"$bin/gen_moves" --games 12 --seed 3 --max-plies 40 --out "$work/g.pgn" 2>/dev/null &&
  "$bin/tensorize" -q --in "$work/g.pgn" --out "$work/d.h5" || fail "could not make the tiny data"
if (cd "$src" && "$bin/train" --config recipes/default.toml --data "$work/d.h5" --out "$work/run" --blocks 1 --channels 4 \
      --batch-size 16 --max-steps 2 --time-budget 0 --device cpu --threads 1 --quiet) > "$work/run.log" 2>&1; then
  python3 - "$work/run/options.json" <<'PY' || fail "train --config recipes/default.toml: the recipe's values are not the run's"
import json, sys
o = json.load(open(sys.argv[1]))
want = {"epochs": 1000, "check_weight": 8, "rare_weight": 4, "pin_weight": 3, "seed": 1, "batch_size": 16,
        "position_ply_limit": 0}
got = {k: o[k] for k in want}
assert got == want, (got, want)
assert o["model"]["blocks"] == 1 and o["model"]["kind"] == "resnet" and o["model"]["policy_head"] == "pairs", o["model"]
PY
else
  fail "train --config recipes/default.toml (tiny): $(tail -3 "$work/run.log")"
fi

# (b) The built-in defaults against recipes/default.toml: where they differ, on purpose. make all
# trains longer than a bare `train` (one epoch, no budget), weights the hard positions and seeds
# with 1, trains the rules head, and trains a resnet of 5 x 32 with ray scans, the paths and the vetoes where
# train's 0 (the architecture's) stands for 6 x 32 without (the layer's cost within the same time; the paths and
# the vetoes are new), at a peak rate of 0.0113 where the rule's falls below it past about 20,000 steps of 128,
# with a margin of 3 logits in the loss (a bare run's loss stays plain BCE, as PyTorch's); evaluate plays
# games and measures every held-out row. Any other difference is drift: fix the recipe or the default, or
# add it here with its reason.
declare -A deliberate=(
  [train]="blocks channels check-weight epochs logit-margin lr max-steps mixing paths pin-weight rare-weight rules-weight seed time-budget vetoes"
  [evaluate]="adversary-games games max-positions seed"
)
for tool in train evaluate; do
  required=()
  [[ $tool == evaluate ]] && required=(--model none.safetensors)
  "$bin/$tool" "${required[@]}" --print-config > "$work/builtin.$tool" 2>&1 || fail "$tool --print-config: $(cat "$work/builtin.$tool")"
  "$bin/$tool" "${required[@]}" --config "$src/recipes/default.toml" --print-config > "$work/recipe.$tool" 2>&1 ||
    fail "$tool --config recipes/default.toml --print-config: $(cat "$work/recipe.$tool")"
  differ=$(python3 - "$work/builtin.$tool" "$work/recipe.$tool" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        key, _, value = line.rstrip("\n").partition(" = ")
        out[key] = value.strip("\"'")
    return out
def same(a, b):
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return a == b
builtin, recipe = read(sys.argv[1]), read(sys.argv[2])
for key in sorted(set(builtin) | set(recipe)):
    if not same(builtin.get(key), recipe.get(key)):
        print(f"{key} {builtin.get(key, '(none)')} {recipe.get(key, '(none)')}")
PY
  )
  echo "$tool: built-in default -> recipes/default.toml:"
  sed 's/^/  /' <<<"$differ"
  [[ $(cut -d' ' -f1 <<<"$differ" | sort | xargs) == "${deliberate[$tool]}" ]] ||
    fail "$tool's built-in defaults and recipes/default.toml differ in $(cut -d' ' -f1 <<<"$differ" | xargs), expected ${deliberate[$tool]}"
done

# (c) Every variable a recipe sets is one make lists in help and takes on the command line, and
# the Makefile's RECIPE_OPTIONS are this test's.
mapfile -t lists < <(pipeline print-HELP_VARIABLES print-PIPELINE_VARIABLES print-RECIPE_OPTIONS)
for variable in ${lists[1]-} ${lists[2]//=*([^ ])/}; do
  [[ " ${lists[0]-} " == *" $variable "* ]] || fail "make help does not list $variable, which a recipe sets"
done
[[ $(tr ' ' '\n' <<<"${lists[2]-}" | sort | xargs) == \
   $(printf '%s\n' "${train_map[@]/=/=train.}" "${evaluate_map[@]/=/=evaluate.}" | sort | xargs) ]] ||
  fail "Makefile.pipeline's RECIPE_OPTIONS are not this test's: ${lists[2]-}"

# What make refuses in a recipe, in one line naming the file and the key.
refused() {
  local regex=$1 out
  shift
  out=$(pipeline help "$@")
  if [[ $? == 0 ]] || ! grep -qE -- "$regex" <<<"$out"; then fail "make help $*: expected /$regex/, got: $out"; fi
}
sed 's/^TRAIN_GAMES = .*/&\nTRAIN_GAME = 5/' "$src/recipes/default.toml" > "$work/typo.toml"
refused "typo.toml:[0-9]+: \[pipeline\] TRAIN_GAME: not a variable of the data stages" RECIPE="$work/typo.toml"
sed 's/^\[evaluate\]/[gen_moves]\nthreads = 1\n&/' "$src/recipes/default.toml" > "$work/section.toml"
refused "section.toml:[0-9]+: \[gen_moves\]: make reads the sections \[pipeline\], \[train\] and \[evaluate\] only" \
  RECIPE="$work/section.toml"
awk '/^\[evaluate\]/ { on = 1 } on && /^seed = / { $0 = "seed = 2" } { print }' "$src/recipes/default.toml" > "$work/seeds.toml"
refused "seeds.toml:[0-9]+: \[evaluate\] seed = 2 but \[train\] seed = 1: make has one SEED" RECIPE="$work/seeds.toml"
sed '/^SHARDS = /d' "$src/recipes/default.toml" > "$work/short.toml"
refused "short.toml sets no SHARDS" RECIPE="$work/short.toml"
refused "CONFIG=nothing: there is no recipes/nothing.toml; the recipes are .*default" CONFIG=nothing
"$bin/train" --config "$work/typo.toml" --print-config > /dev/null 2>&1 || fail "train refused the [pipeline] section it skips"
printf '[train]\nlearning-rate = 0.1\n' > "$work/train-typo.toml"
err=$("$bin/train" --config "$work/train-typo.toml" --data d.h5 --out never 2>&1)
[[ $err == "train: --config '$work/train-typo.toml': unknown key 'learning-rate' in [train] (no such option) (see --help)" ]] ||
  fail "a key of [train] that names no option: $err"

finish "recipes ok: ${#recipes[@]} recipes, make's commands and the tools by hand agree"
