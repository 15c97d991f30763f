#!/usr/bin/env bash
# preemption.sh BIN_DIR PYTHON: train preempted as clusters do it. SIGTERM (Slurm's preemption)
# or SIGUSR1 (`sbatch --signal`'s warning) mid-run: one line, a checkpoint, no temporary, exit
# status 75 (which slurm/train.sbatch requeues), and --resume ends with the weights of a run never
# stopped. A temporary that a SIGKILL left is gone after the next train; a --force killed while it
# moved the run aside (replaced.incoming/) gets it back.
set -uo pipefail
bin=$(cd "$1" && pwd)
python=$2
source "$(dirname "$0")/checks.sh"
cd "$work" || exit 1

small_dataset
net=(--data data.h5 --arch resnet --blocks 1 --channels 8 --batch-size 16 --eval-every 100 --checkpoint-every 100
     --device cpu --threads 1 --seed 5 --quiet)
small=("${net[@]}" --max-steps 400)

# The same tensors (names, dtypes, shapes, bytes): the runs' metadata differ (command line, times).
same_weights() {
  "$python" - "$1" "$2" <<'PY'
import sys
from safetensors.numpy import load_file
a, b = load_file(sys.argv[1]), load_file(sys.argv[2])
sys.exit(0 if a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and (a[k] == b[k]).all() for k in a) else 1)
PY
}

OMP_NUM_THREADS=1 "$bin/train" "${small[@]}" --out whole 2>/dev/null || fail "the uninterrupted run failed"

for sig in TERM USR1; do
  run=stopped-$sig
  OMP_NUM_THREADS=1 "$bin/train" "${small[@]}" --out "$run" 2> "$run.err" &
  pid=$!
  # Wait until it trains (the first checkpoint is there), then ask it to stop.
  for _ in $(seq 600); do
    [[ -f $run/checkpoint.safetensors ]] && break
    sleep 0.1
  done
  kill -s "$sig" "$pid"
  start=$SECONDS
  wait "$pid"
  status=$?
  ((SECONDS - start <= 30)) || fail "SIG$sig: train took $((SECONDS - start)) s to stop (a cluster kills after 30)"
  [[ $status == 75 ]] || fail "SIG$sig: exit status $status, expected 75"
  grep -Eq "^train: SIG$sig: stopped after step [0-9]+ with a checkpoint in '$run/checkpoint.safetensors'; continue with --resume \(exit status 75\)$" "$run.err" ||
    fail "SIG$sig: no such line in: $(cat "$run.err")"
  [[ $(wc -l < "$run.err") == 1 ]] || fail "SIG$sig: more than one line: $(cat "$run.err")"
  ls "$run" | grep -q '\.tmp\.' && fail "SIG$sig: temporaries left: $(ls "$run")"
  [[ -f $run/model.safetensors ]] && fail "SIG$sig: a model from a run that did not finish"
  # A temporary a SIGKILL left (a checkpoint's, by an earlier process) goes at the next start.
  echo orphan > "$run/checkpoint.safetensors.tmp.999999.0"
  OMP_NUM_THREADS=1 "$bin/train" "${small[@]}" --out "$run" --resume 2>/dev/null || fail "SIG$sig: --resume failed"
  [[ -e $run/checkpoint.safetensors.tmp.999999.0 ]] && fail "SIG$sig: the orphaned temporary is still there"
  same_weights whole/model.safetensors "$run/model.safetensors" ||
    fail "SIG$sig: the resumed run's weights differ from the uninterrupted run's"
done

# A --force killed after it began to move the finished run aside: replaced.incoming/ holds part of
# it. The next train puts it back before anything else, so --force keeps it in replaced/ (until
# the new run saves a model: this one pauses before).
cp -r whole killed
mkdir killed/replaced.incoming
mv killed/model.safetensors killed/options.json killed/replaced.incoming/
OMP_NUM_THREADS=1 "$bin/train" "${net[@]}" --max-steps 20 --stop-at-step 10 --out killed --force 2>/dev/null || fail "--force after a kill failed"
[[ -e killed/replaced.incoming ]] && fail "replaced.incoming/ is still there"
same_weights whole/model.safetensors killed/replaced/model.safetensors ||
  fail "the run a killed --force was moving is not in replaced/"
[[ -f killed/replaced/options.json && -f killed/replaced/metrics.csv ]] || fail "replaced/ lacks the run's files: $(ls killed/replaced)"
finish "preemption: SIGTERM and SIGUSR1 stop train with a checkpoint and status 75, --resume is exact, no temporary is left"
