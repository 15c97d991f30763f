# shellcheck shell=bash
# slurm/recipe.sh: what the Slurm scripts share (sourced, never run): the recipe read the way
# Makefile.pipeline reads it, and the tools run on the host or in a container.
#
# recipe_setup resolves, as make does:
#   RECIPE (or recipes/$CONFIG.toml; the cluster's CONFIG defaults to gpu), CONFIG (the recipe's
#   name when only RECIPE is given), every variable of [pipeline] (RECIPE_PIPELINE_VARIABLES),
#   SEED and ARCH (from [train]), TEST_SEED (SEED+1000003), PLACEMENT_SEED (SEED+2000003),
#   LOPSIDED_SEED (SEED+3000003),
#   RUN (DATA/runs/ARCH-CONFIG) and REPORT (DATA/report):
#   a variable set in the environment keeps its value, the recipe gives the rest.
# recipe_given train|evaluate prints, NUL-separated, `--option value` for each variable of make's
#   RECIPE_OPTIONS of that section that was set in the environment (BLOCKS=8 -> --blocks 8): train
#   and evaluate read the rest from the recipe themselves (--config RECIPE). EVAL_EVERY
#   (--eval-every) is the cluster's own.
# legalnet_tool NAME ARGS...: $LEGALNET_BIN/NAME, prefixed by LEGALNET_RUN (a command such as
#   `apptainer exec --nv --bind /shared legalnet.sif`; docs/cluster.md).
# The lists below are Makefile.pipeline's PIPELINE_VARIABLES and RECIPE_OPTIONS, and the reader
# its RECIPE_AWK: tests/cluster/slurm_commands.sh fails when they differ from make's, or when
# the jobs' command lines differ from those of `make all` for the same recipe.

RECIPE_PIPELINE_VARIABLES="TRAIN_GAMES TRAIN_MAX_PLIES PLACEMENT_GAMES PLACEMENT_MAX_PLIES PLACEMENT_PRESSURE LOPSIDED_GAMES \
LOPSIDED_MAX_PLIES TRAIN_FINAL_POSITIONS TEST_GAMES SHARDS OOD_PLACEMENTS OOD_DEPTH EXHAUSTIVE_MATERIAL SAMPLED_MATERIAL SAMPLED_POSITIONS"
RECIPE_OPTIONS="ARCH=train.arch BLOCKS=train.blocks CHANNELS=train.channels HIDDEN=train.hidden \
HEADS=train.heads MIXING=train.mixing POLICY_HEAD=train.policy-head INPUTS=train.inputs \
TRAIN_PLY_LIMIT=train.position-ply-limit CHECK_WEIGHT=train.check-weight RARE_WEIGHT=train.rare-weight \
PIN_WEIGHT=train.pin-weight RULES_WEIGHT=train.rules-weight BATCH=train.batch-size LR=train.lr STEPS=train.max-steps \
TIME_BUDGET=train.time-budget SEED=train.seed DEVICE=train.device PRECISION=train.precision \
EVAL_GAMES=evaluate.games ADVERSARY_GAMES=evaluate.adversary-games SEARCH_STARTS=evaluate.search-starts \
SEARCH_BUDGET=evaluate.search-budget RANDOM_EDIT_BUDGET=evaluate.random-edit-budget \
EVAL_POSITIONS=evaluate.max-positions SEED=evaluate.seed DEVICE=evaluate.device PRECISION=evaluate.precision"
RECIPE_SLURM_OPTIONS="EVAL_EVERY=train.eval-every"

# The reader: Makefile.pipeline's RECIPE_AWK (its $$ written $), printing VARIABLE=value lines
# for the recipe's [pipeline] variables and make-named [train]/[evaluate] keys, or one
# `ERROR message` line.
# shellcheck disable=SC2016 # awk's program, not the shell's
RECIPE_AWK='
function fail(message) { if (error == "") { error = FILENAME ":" FNR ": " message; } }
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s; }
BEGIN {
  n = split(options, pairs, " ");
  for (i = 1; i <= n; i++) { eq = index(pairs[i], "="); variable[substr(pairs[i], eq + 1)] = substr(pairs[i], 1, eq - 1); }
  n = split(pipeline, names, " ");
  for (i = 1; i <= n; i++) { variable["pipeline." names[i]] = names[i]; }
}
/^[ \t]*(#.*)?$/ { next; }
/^[ \t]*\[/ {
  section = trim($0); sub(/^\[/, "", section); sub(/\][ \t]*(#.*)?$/, "", section);
  if (section != "pipeline" && section != "train" && section != "evaluate") {
    fail("[" section "]: make reads the sections [pipeline], [train] and [evaluate] only");
  }
  next;
}
{
  eq = index($0, "=");
  if (eq == 0) { fail("expected key = value: " $0); next; }
  key = trim(substr($0, 1, eq - 1)); value = trim(substr($0, eq + 1));
  if (value ~ /^"/) {
    value = substr(value, 2); end = index(value, "\"");
    if (end == 0 || trim(substr(value, end + 1)) !~ /^(#.*)?$/) {
      fail(key ": a string runs to its closing quote, then the line ends"); next;
    }
    value = substr(value, 1, end - 1);
  } else {
    sub(/[ \t]*#.*$/, "", value);
    if (value == "") { fail(key ": no value (an empty one is \"\")"); next; }
  }
  if (value !~ /^[A-Za-z0-9_.+?*:\/-]*$/) { fail(key " = " value ": a value holds letters, digits and _.+?*:/- only"); next; }
  if (section == "") { fail(key ": outside a section ([pipeline], [train] or [evaluate])"); next; }
  id = section "." key;
  if (id in seen) { fail(key ": twice in [" section "]"); next; }
  seen[id] = 1;
  if (section == "pipeline" && !(id in variable)) {
    fail("[pipeline] " key ": not a variable of the data stages (" pipeline ")"); next;
  }
  if (!(id in variable)) { next; }
  name = variable[id];
  if (!(name in value_of)) { value_of[name] = value; where[name] = "[" section "] " key; order[++count] = name; }
  else if (value_of[name] != value) {
    fail("[" section "] " key " = " value " but " where[name] " = " value_of[name] ": make has one " name);
  }
}
END {
  if (error != "") { print "ERROR " error; exit; }
  for (i = 1; i <= count; i++) { print order[i] "=" value_of[order[i]]; }
}'

recipe_fail() {  # one line, named by the job (its batch script is a copy named slurm_script)
  echo "${SLURM_JOB_NAME:-${0##*/}}: $*" >&2
  exit 1
}

# shellcheck disable=SC2120 # ROOT is optional
# recipe_setup [ROOT]: ROOT is the repository (default LEGALNET_ROOT, else the folder the job was
# submitted from, else this one), where recipes/ and scripts/ are.
recipe_setup() {
  LEGALNET_ROOT=${1:-${LEGALNET_ROOT:-${SLURM_SUBMIT_DIR:-$PWD}}}
  local pair name line given_names=" "
  # What the environment gives, before the recipe fills in the rest (make's `given`).
  for pair in $RECIPE_OPTIONS $RECIPE_SLURM_OPTIONS; do
    name=${pair%%=*}
    [[ -v $name ]] && given_names+="$name "
  done
  RECIPE_GIVEN=$given_names
  if [[ -v GAMES && ! -v TRAIN_GAMES ]]; then  # the cluster's old name
    echo "${SLURM_JOB_NAME:-${0##*/}}: GAMES is deprecated, use TRAIN_GAMES (make's name)" >&2
    TRAIN_GAMES=$GAMES
  fi
  if [[ -n ${RECIPE:-} ]]; then
    CONFIG=${CONFIG:-$(basename "$RECIPE" .toml)}
  else
    CONFIG=${CONFIG:-gpu}
    RECIPE=$LEGALNET_ROOT/recipes/$CONFIG.toml
  fi
  [[ -f $RECIPE ]] || recipe_fail "CONFIG=$CONFIG: there is no $RECIPE (set RECIPE=FILE or CONFIG, or submit from the repository)"
  RECIPE=$(realpath "$RECIPE")  # the jobs run elsewhere
  local settings
  settings=$(awk -v options="$RECIPE_OPTIONS" -v pipeline="$RECIPE_PIPELINE_VARIABLES" "$RECIPE_AWK" "$RECIPE") ||
    recipe_fail "$RECIPE: unreadable"
  while IFS= read -r line; do
    [[ $line == ERROR\ * ]] && recipe_fail "${line#ERROR }"
    name=${line%%=*}
    [[ -v $name ]] || printf -v "$name" '%s' "${line#*=}"
  done <<<"$settings"
  local missing=()
  for name in $RECIPE_PIPELINE_VARIABLES SEED; do
    [[ -v $name ]] || missing+=("$name")
  done
  ((${#missing[@]} == 0)) ||
    recipe_fail "$RECIPE sets no ${missing[*]} ([pipeline]'s variables, and [train]'s seed: SEED)"
  PLACEMENT_SEED=${PLACEMENT_SEED:-$((SEED + 2000003))}
  LOPSIDED_SEED=${LOPSIDED_SEED:-$((SEED + 3000003))}
  TEST_SEED=${TEST_SEED:-$((SEED + 1000003))}
  : "${DATA:?set DATA to the output folder (on the shared filesystem)}"
  RUN=${RUN:-$DATA/runs/${ARCH:-}-$CONFIG}
  REPORT=${REPORT:-$DATA/report}
  : "${LEGALNET_BIN:?set LEGALNET_BIN to the folder of the legalnet tools (build/bin)}"
  read -ra LEGALNET_RUN_PREFIX <<<"${LEGALNET_RUN:-}"
  export HDF5_USE_FILE_LOCKING=FALSE  # NFS and Lustre often lack the locks HDF5 asks for
}

# recipe_given train|evaluate: --option value (NUL-separated) for each given variable of the section.
recipe_given() {
  local pair name key
  for pair in $RECIPE_OPTIONS $RECIPE_SLURM_OPTIONS; do
    name=${pair%%=*} key=${pair#*=}
    [[ $key == "$1".* && $RECIPE_GIVEN == *" $name "* ]] && printf -- '--%s\0%s\0' "${key#*.}" "${!name}"
  done
  return 0
}

# The training data's parts after the shards, one a line, in make's order: placement (unless
# PLACEMENT_GAMES is 0), lopsided (unless LOPSIDED_GAMES is 0). data.sbatch's task SHARDS+i makes
# the i-th, games/NAME.pgn.zst and tensors/NAME.h5.
recipe_start_parts() {
  [[ $PLACEMENT_GAMES != 0 ]] && echo placement
  [[ $LOPSIDED_GAMES != 0 ]] && echo lopsided
  return 0
}

# The position sets evaluate measures, make's OOD_SETS, one a line.
recipe_position_sets() {
  echo "$DATA/positions/placements.fen"
  echo "$DATA/positions/perft-tree.fen"
  [[ -n $EXHAUSTIVE_MATERIAL ]] && echo "$DATA/positions/exhaustive.fen"
  [[ -n $SAMPLED_MATERIAL && $SAMPLED_POSITIONS != 0 ]] && echo "$DATA/positions/sampled-material.fen"
  return 0
}

legalnet_tool() {
  local name=$1
  shift
  "${LEGALNET_RUN_PREFIX[@]}" "$LEGALNET_BIN/$name" "$@"
}
