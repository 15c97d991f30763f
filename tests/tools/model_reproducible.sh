#!/usr/bin/env bash
# model_reproducible.sh BIN_DIR SOURCE_DIR: the same options and data give the same model file,
# byte for byte (run/training_record.h): two runs of one recipe with other spellings (the data
# copied to another path, another run folder, the options in another order, a --config file
# against the same values given by hand) write identical model.safetensors; a different seed
# does not. (The same thread count: torch's CPU reductions split their sums by thread.) The provenance the model leaves out (the command line, the paths, the version, the
# seconds) is in the run's options.json, and evaluate's report takes it from there while the
# model lies in its run folder, and goes without it for a copied model.
set -uo pipefail
bin=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
source "$(dirname "$0")/checks.sh"
cd "$work" || exit 1
export OMP_NUM_THREADS=1

small_dataset
mkdir -p elsewhere && cp data.h5 elsewhere/copy.h5
cat > recipe.toml <<'TOML'
[train]
arch = "resnet"
blocks = 1
channels = 8
batch-size = 16
max-steps = 60
time-budget = 0
seed = 5
device = "cpu"
precision = "fp32"
TOML
by_hand=(--arch resnet --blocks 1 --channels 8 --batch-size 16 --max-steps 60 --time-budget 0 --seed 5 --device cpu
         --precision fp32)

"$bin/train" --config recipe.toml --data data.h5 --out run-a --threads 1 --quiet 2>err || fail "train --config: $(cat err)"
"$bin/train" --quiet --out runs/b --data elsewhere/copy.h5 "${by_hand[@]}" --threads 1 2>err || fail "train by hand: $(cat err)"
"$bin/train" --config recipe.toml --data data.h5 --out run-c --seed 6 --threads 1 --quiet 2>err || fail "train --seed 6: $(cat err)"
if [[ -f run-a/model.safetensors && -f runs/b/model.safetensors ]]; then
  cmp -s run-a/model.safetensors runs/b/model.safetensors ||
    fail "the same options and data gave different model files: $(cmp run-a/model.safetensors runs/b/model.safetensors)"
  cmp -s run-a/model.safetensors run-c/model.safetensors && fail "another seed gave the same model file"
  grep -q '"command_line"' run-a/options.json || fail "options.json holds no command line"
  grep -q 'command_line' run-a/model.safetensors && fail "the model file holds the command line"
  grep -q 'elsewhere' runs/b/model.safetensors && fail "the model file holds a data path"
fi

# evaluate: the provenance from the run folder's options.json, none for a copied model.
"$bin/evaluate" --model run-a/model.safetensors --data data.h5 --max-positions 50 --games 0 --adversary-games 0 \
  --threads 1 --quiet --report in-folder.json > /dev/null 2>err || fail "evaluate in the run folder: $(cat err)"
mkdir -p copied && cp run-a/model.safetensors copied/
"$bin/evaluate" --model copied/model.safetensors --data data.h5 --max-positions 50 --games 0 --adversary-games 0 \
  --threads 1 --quiet --report copied.json > /dev/null 2>err || fail "evaluate of a copied model: $(cat err)"
grep -q '"command_line": "[^"]*train --config recipe.toml' in-folder.json ||
  fail "evaluate's report lacks the run's command line (options.json beside the model)"
grep -q '"train_seconds"' copied.json && fail "a copied model's report shows the run folder's seconds"
# A run folder trained again since (its options.json another run's) gives no provenance.
cp run-c/options.json copied/options.json
"$bin/evaluate" --model copied/model.safetensors --data data.h5 --max-positions 50 --games 0 --adversary-games 0 \
  --threads 1 --quiet --report other.json > /dev/null 2>err || fail "evaluate beside another run's options.json: $(cat err)"
grep -q '"--seed 6\|seed 6' other.json && fail "evaluate took another run's provenance"
finish "model_reproducible ok: one model file for one set of options and data"
