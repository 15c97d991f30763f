#!/usr/bin/env bash
# option_names.sh BIN_DIR: one name, one meaning across the four tools (issue 25). Every renamed
# option's old spelling still works, with its old meaning, and warns exactly once; an unknown
# choice or a size past the limits table is one line on stderr and exit 2; --threads 0 runs on
# every core and --report writes the run's JSON in all four tools.
set -uo pipefail
bin=$(cd "$1" && pwd)
source "$(dirname "$0")/checks.sh"
cd "$work"

# ok_warns WARNING CMD...: CMD succeeds and its stderr holds WARNING on exactly one line.
ok_warns() {
  local warning=$1 err
  shift
  if ! err=$("$@" 2>&1 >/dev/null); then
    fail "$*: failed: $err"
  elif [[ $(grep -cxF -- "$warning" <<<"$err") != 1 ]]; then
    fail "$*: expected the warning '$warning' once on stderr, got: $err"
  fi
}

# refused REGEX CMD...: CMD exits 2 with one line on stderr matching REGEX.
refused() {
  local regex=$1 err rc
  shift
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if ((rc != 2)) || [[ $(printf '%s\n' "$err" | wc -l) -ne 1 ]] || ! [[ $err =~ $regex ]]; then
    fail "$*: exit $rc, expected 2 and one line matching /$regex/: $err"
  fi
}

json() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

# gen_moves and tensorize: --report, the old --stats-json, --threads 0.
"$bin/gen_moves" -q --games 40 --seed 3 --out g.pgn --threads 0 --report g.json || fail "gen_moves --threads 0 --report"
[[ $(json g.json '["games"]') == 40 ]] || fail "gen_moves --report: $(cat g.json)"
ok_warns "gen_moves: --stats-json is deprecated, use --report" \
  "$bin/gen_moves" -q --games 40 --seed 3 --out g2.pgn --stats-json g2.json
cmp -s g.pgn g2.pgn || fail "gen_moves --threads 0 changed the games"
[[ $(json g2.json '["games"]') == 40 ]] || fail "gen_moves --stats-json wrote no report"
"$bin/tensorize" -q --in g.pgn --out d.h5 --threads 0 --report d.json || fail "tensorize --threads 0 --report"
[[ $(json d.json '["pgn_files"]') == "['g.pgn']" ]] || fail "tensorize --report: $(cat d.json)"
ok_warns "tensorize: --stats-json is deprecated, use --report" \
  "$bin/tensorize" -q --in g.pgn --out d2.h5 --stats-json d2.json
[[ -s d2.json ]] || fail "tensorize --stats-json wrote no report"
refused "^gen_moves: --threads: Value -1 not in range" "$bin/gen_moves" --threads -1

# train: --arch and --position-ply-limit, and the old --model / --max-ply / --max-plies.
small=(-q --data d.h5 --hidden 16 --max-steps 2 --batch-size 16 --eval-every 2 --device cpu --threads 1)
"$bin/train" "${small[@]}" --out r0 --arch mlp --position-ply-limit 30 --report r0.json || fail "train --arch"
[[ $(json r0/options.json '["model"]["kind"]') == mlp ]] || fail "train --arch mlp: $(cat r0/options.json)"
[[ $(json r0/options.json '["position_ply_limit"]') == 30 ]] || fail "train --position-ply-limit 30"
[[ $(json r0/options.json '["input_kind"]') == state ]] || fail "options.json has no input_kind"
[[ $(json r0.json '["steps"]') == 2 ]] || fail "train --report: $(cat r0.json)"
# --lr and --policy-head left out are the architecture's (nn::ModelSpec's lr and policy_head), recorded as the values used
# (a resnet's for 2 steps of 16 rows: its 1e-2 times the cap for short schedules, 3.2, times
# sqrt(16 / 256) for the batch).
[[ $(json r0/options.json '["lr"]') == 0.002 ]] || fail "train --arch mlp without --lr: $(json r0/options.json '["lr"]')"
"$bin/train" "${small[@]}" --out r5 --arch resnet --blocks 1 --channels 4 || fail "train --arch resnet"
[[ $(json r5/options.json '["lr"]') == 0.008 ]] || fail "train --arch resnet without --lr: $(json r5/options.json '["lr"]')"
[[ $(json r5/options.json '["model"]["policy_head"]') == pairs ]] || fail "train --arch resnet without --policy-head"
[[ $(json r0/options.json '["model"]["policy_head"]') == types ]] || fail "train --arch mlp without --policy-head"
"$bin/train" "${small[@]}" --out r8 --arch resnet --blocks 1 --channels 4 --policy-head types || fail "--policy-head types"
[[ $(json r8/options.json '["model"]["policy_head"]') == types ]] || fail "train --policy-head types"
"$bin/train" "${small[@]}" --out r7 --arch resnet --blocks 1 --channels 4 --lr 3e-3 || fail "train --lr 3e-3"
[[ $(json r7/options.json '["lr"]') == 0.003 ]] || fail "train --lr 3e-3: $(json r7/options.json '["lr"]')"
ok_warns "train: --model is deprecated, use --arch" "$bin/train" "${small[@]}" --out r1 --model mlp
[[ $(json r1/options.json '["model"]["kind"]') == mlp ]] || fail "train --model mlp did not train an mlp"
ok_warns "train: --max-ply is deprecated, use --position-ply-limit" "$bin/train" "${small[@]}" --out r2 --arch mlp --max-ply 29
[[ $(json r2/options.json '["position_ply_limit"]') == 30 ]] || fail "--max-ply 29 (ply <= 29) is not --position-ply-limit 30"
ok_warns "train: --max-plies is deprecated, use --position-ply-limit" "$bin/train" "${small[@]}" --out r3 --arch mlp --max-plies -1
[[ $(json r3/options.json '["position_ply_limit"]') == 0 ]] || fail "--max-plies -1 (all) is not --position-ply-limit 0"
printf 'model = mlp\n' >old.ini  # a config file with the old key: warned once too
ok_warns "train: --model is deprecated, use --arch" "$bin/train" "${small[@]}" --out r4 --config old.ini

# Choices and bounds come from the tables: an unknown name or a size past the limit is refused.
refused "^train: --arch: mlpx not in \{mlp,conv,resnet,attention\}" "$bin/train" --data d.h5 --out r6 --arch mlpx
err=$("$bin/train" --data d.h5 --out r6 --model x 2>&1) && fail "train --model x was accepted"
[[ $err == *"x not in {mlp,conv,resnet,attention}"* ]] || fail "train --model x: $err"
refused "^train: --optimizer: adamax not in \{adam,adamw,sgd\}" "$bin/train" --data d.h5 --out r6 --optimizer adamax
refused "^train: --data-mode: disk not in \{auto,memory,stream\}" "$bin/train" --data d.h5 --out r6 --data-mode disk
refused "^train: --precision: fp16 not in \{auto,fp32,tf32,bf16\}" "$bin/train" --data d.h5 --out r6 --precision fp16
refused "^evaluate: --precision: fp16 not in" "$bin/evaluate" --model r0/model.safetensors --precision fp16
refused "^train: --channels: Value 8192 not in range 0 to 4096" "$bin/train" --data d.h5 --out r6 --channels 8192
refused "^train: --heads: Value 65 not in range 0 to 64" "$bin/train" --data d.h5 --out r6 --heads 65
err=$("$bin/train" "${small[@]}" --out r6 --arch mlp --policy-head pairs 2>&1) && fail "train --arch mlp --policy-head pairs ran"
[[ $err == "train: policy head 'pairs' is a resnet option, not mlp's" && ! -e r6 ]] || fail "--arch mlp --policy-head pairs: $err"
refused "^train: --policy-head: lines not in \{auto,types,pairs\}" "$bin/train" --data d.h5 --out r6 --policy-head lines

# --help shows the defaults of the option structs, not copies.
help=$("$bin/train" --help)
grep -qE -- '--arch TEXT:\{mlp,conv,resnet,attention\}=resnet$' <<<"$help" || fail "train --help: --arch default"
grep -qE -- '--model|--max-ply' <<<"$help" && fail "train --help lists a deprecated option"

finish "option names ok"
