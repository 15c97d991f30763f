#!/usr/bin/env bash
# rank_loss.sh BIN_DIR PYTHON: a rank of a two-process run (Gloo, CPU) that dies (SIGKILL) or stops
# (SIGSTOP) mid-run ends the other one within a bound, with one line naming both ranks and what
# happened and exit status 1: a failure, which slurm/train.sbatch does not requeue (only 75, a
# preemption's checkpoint, is requeued; srun --kill-on-bad-exit ends the job). A dead peer is seen
# at once (its connections close); a stopped one after LEGALNET_RANK_TIMEOUT seconds.
set -uo pipefail
bin=$(cd "$1" && pwd)
python=$2
source "$(dirname "$0")/checks.sh"
cd "$work" || exit 1

small_dataset
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

timeout_s=3
# lose SIGNAL VICTIM BOUND REGEX: both ranks train until the first checkpoint; then VICTIM gets
# SIGNAL and the other rank must end within BOUND seconds, its stderr one line matching REGEX.
lose() {
  local sig=$1 victim=$2 bound=$3 regex=$4 port pids=() r
  local survivor=$((1 - victim)) run=run-$1-$2
  port=$(free_port)
  for r in 0 1; do
    LEGALNET_RANK_TIMEOUT=$timeout_s OMP_NUM_THREADS=1 WORLD_SIZE=2 RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$bin/train" --data data.h5 --out "$run" --arch mlp --hidden 16 --batch-size 16 --max-steps 1000000 \
      --epochs 100000 --eval-every 1000000 --checkpoint-every 5 --device cpu --threads 1 --quiet 2> "$run.$r.err" &
    pids+=($!)
  done
  # Up to 2 minutes for the first checkpoint: two torch processes starting beside the suite's
  # heaviest tests on 2 cores (ctest -j2) can take more than the 30 s this waited before.
  for _ in $(seq 2400); do
    [[ -f $run/checkpoint.safetensors ]] && break
    sleep 0.05
  done
  [[ -f $run/checkpoint.safetensors ]] || fail "SIG$sig to rank $victim: the run never trained: $(cat "$run".*.err)"
  kill -s "$sig" "${pids[victim]}"
  local start=$SECONDS
  while kill -0 "${pids[survivor]}" 2>/dev/null && ((SECONDS - start <= bound)); do sleep 0.05; done
  if kill -0 "${pids[survivor]}" 2>/dev/null; then
    fail "SIG$sig to rank $victim: rank $survivor still runs after $bound s (a hang)"
    kill -9 "${pids[survivor]}"
  fi
  wait "${pids[survivor]}"
  local status=$?
  kill -9 "${pids[victim]}" 2>/dev/null
  kill -CONT "${pids[victim]}" 2>/dev/null
  wait "${pids[victim]}" 2>/dev/null
  [[ $status == 1 ]] || fail "SIG$sig to rank $victim: rank $survivor ended with status $status, expected 1"
  local err
  err=$(cat "$run.$survivor.err")
  [[ $(printf '%s\n' "$err" | wc -l) == 1 && $err =~ $regex ]] ||
    fail "SIG$sig to rank $victim: rank $survivor's stderr is not one line matching /$regex/: $err"
}

lose KILL 1 10 "^train: rank 0 of 2: rank 1 ended \(its connections closed\); this rank stops too \([^()]*\)$"
lose KILL 0 10 "^train: rank 1 of 2: rank 0 ended \(its connections closed\); this rank stops too \([^()]*\)$"
lose STOP 1 $((timeout_s + 10)) "^train: rank 0 of 2: rank 1 did not answer for $timeout_s s \(stopped, hung or far behind; LEGALNET_RANK_TIMEOUT sets the wait\); this rank stops \(.*\)$"
lose STOP 0 $((timeout_s + 10)) "^train: rank 1 of 2: rank 0 did not answer for $timeout_s s \(stopped, hung or far behind; LEGALNET_RANK_TIMEOUT sets the wait\); this rank stops \(.*\)$"
# A variable that is not a number of seconds is refused at the start, naming it.
LEGALNET_RANK_TIMEOUT=soon WORLD_SIZE=2 RANK=1 "$bin/train" --data data.h5 --out never --device cpu 2> bad.err
[[ $? == 1 && $(cat bad.err) == "train: environment variable LEGALNET_RANK_TIMEOUT='soon' is not a count" ]] ||
  fail "LEGALNET_RANK_TIMEOUT=soon: $(cat bad.err)"
finish "rank loss: a killed or stopped rank ends the other in one line with status 1, within the bound"
