#!/usr/bin/env bash
# output_locks.sh BIN_DIR: two runs writing one output (util/files.h AtomicPath's lock): the
# second is refused in one line at its start, naming the output, while the first writes on and
# completes its file; SIGTERM to a run removes its lock with its temporary; a lock file left by a
# killed run (SIGKILL: no cleanup) holds nothing, and the next run takes it; a link planted under
# the lock's name is refused, not written through.
set -uo pipefail
bin=$(cd "$1" && pwd)
source "$(dirname "$0")/checks.sh"
cd "$work" || exit 1

# wait_for FILE: until it exists (at most 30 s).
wait_for() { for _ in $(seq 300); do [[ -e $1 ]] && return 0; sleep 0.1; done; return 1; }

# gen_moves: a long run holds games.pgn; a second run on it is refused; the first is then stopped.
"$bin/gen_moves" --games 5000000 --seed 1 --out games.pgn --quiet 2> first.err &
first=$!
if wait_for games.pgn.lock; then
  if "$bin/gen_moves" --games 10 --seed 2 --out games.pgn --quiet 2> second.err; then
    fail "a second gen_moves on the same --out was not refused"
  else
    [[ $(wc -l < second.err) == 1 ]] || fail "the refusal is not one line: $(cat second.err)"
    grep -q "games.pgn' is being written by another run" second.err || fail "the refusal does not say why: $(cat second.err)"
  fi
  # tensorize on the same name as gen_moves' output: refused too (one lock for every tool).
  "$bin/gen_moves" --games 5 --seed 3 --out small.pgn --quiet
  "$bin/tensorize" --in small.pgn --out games.pgn --quiet 2> third.err && fail "tensorize over a locked output was not refused"
else
  fail "gen_moves made no lock beside its output"
fi
kill -TERM $first; wait $first 2> /dev/null
[[ -e games.pgn.lock ]] && fail "SIGTERM left the lock"
ls games.pgn.tmp.* > /dev/null 2>&1 && fail "SIGTERM left a temporary"

# A lock left by SIGKILL holds nothing: the next run takes it and removes it at the end.
"$bin/gen_moves" --games 5000000 --seed 1 --out killed.pgn --quiet &
victim=$!
wait_for killed.pgn.lock || fail "no lock to kill"
kill -KILL $victim; wait $victim 2> /dev/null
rm -f killed.pgn.tmp.*
"$bin/gen_moves" --games 10 --seed 1 --out killed.pgn --quiet 2> err || fail "a stale lock stopped the next run: $(cat err)"
[[ -e killed.pgn.lock ]] && fail "the lock is still there after a completed run"
[[ -s killed.pgn ]] || fail "the run after the stale lock wrote nothing"

# A link planted under the lock's name: refused, and what it points to is untouched.
echo precious > victim.txt
ln -s victim.txt planted.pgn.lock
"$bin/gen_moves" --games 10 --seed 1 --out planted.pgn --quiet 2> err && fail "a planted link under the lock was followed"
[[ $(cat victim.txt) == precious ]] || fail "the file behind a planted lock link changed"
[[ -e planted.pgn ]] && fail "a run refused for its lock still wrote its output"
finish "output_locks ok: one run per output"
