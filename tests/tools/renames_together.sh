#!/usr/bin/env bash
# renames_together.sh BIN_DIR PYTHON: the outputs of one run take their names together
# (util/files.h commit_together). strace stops a run at its Nth rename: SIGKILL there leaves
# the new PGN beside the old report, and the journal in the lock files; the next reader of
# either (tensorize reading the PGN, tensorize merge or Python reading a dataset) or the next
# writer completes the renames first, so nobody reads one run's file beside another's. SIGTERM
# at a rename waits for the last one. A journal planted beside an input moves nothing.
set -uo pipefail
bin=$(cd "$1" && pwd)
python=$2
export PYTHONPATH
PYTHONPATH=$(cd "$(dirname "$0")/../../python" && pwd)
source "$(dirname "$0")/checks.sh"
cd "$work" || exit 1
command -v strace > /dev/null || { echo "FAIL: no strace (scripts/install-deps installs it)"; exit 1; }
strace -qq -o /dev/null true 2> /dev/null || { echo "renames_together: strace cannot trace here (ptrace refused): skipped"; exit 77; }

# at N SIGNAL COMMAND...: runs COMMAND with SIGNAL delivered as it enters its Nth rename.
at() {
  local n=$1 sig=$2
  shift 2
  (strace -f -qq -o /dev/null -e trace=rename,renameat,renameat2 \
    -e inject=rename,renameat,renameat2:signal="$sig":when="$n" "$@"
    exit $?) 2> /dev/null  # the subshell reports the signal, to /dev/null
}
games_in() { grep -o '"games": [0-9]*' "$1" | grep -o '[0-9]*$'; }
no_leftovers() {
  local left
  left=$(ls -d "$@" 2> /dev/null)
  [[ -z $left ]] || fail "$2 left behind: $left"
}

# gen_moves killed between its PGN's rename and its report's.
"$bin/gen_moves" --games 20 --seed 1 --out g.pgn --report g.json --quiet
at 2 SIGKILL "$bin/gen_moves" --games 7 --seed 2 --out g.pgn --report g.json --quiet
[[ $(games_in g.json) == 20 ]] || fail "the report was renamed before the kill: the test did not stop between the renames"
[[ $(grep -c '^\[Event' g.pgn) == 7 ]] || fail "the PGN of the killed run was not renamed before the kill"
[[ -s g.pgn.lock && -s g.json.lock ]] || fail "no journal in the lock files after a kill between the renames"
# A reader in another folder finishes the renames before it reads.
mkdir elsewhere
(cd elsewhere && "$bin/tensorize" --quiet --in ../g.pgn --out x.h5) || fail "tensorize could not read the PGN"
[[ $(games_in g.json) == 7 ]] || fail "reading the PGN did not finish the killed run's renames (report of $(games_in g.json) games)"
no_leftovers g.pgn.lock g.json.lock g.json.tmp.* g.pgn.tmp.*

# The next writer of one of the outputs finishes the renames of the other first.
at 2 SIGKILL "$bin/gen_moves" --games 9 --seed 3 --out g.pgn --report g.json --quiet
[[ $(games_in g.json) == 7 ]] || fail "the second kill did not stop between the renames"
"$bin/gen_moves" --games 4 --seed 4 --out g.pgn --quiet || fail "the next gen_moves on g.pgn failed"
[[ $(games_in g.json) == 9 ]] || fail "the next writer did not finish the killed run's renames"
[[ $(grep -c '^\[Event' g.pgn) == 4 ]] || fail "the next writer's PGN is not its own"
no_leftovers g.pgn.lock g.json.lock g.json.tmp.* g.pgn.tmp.*

# SIGTERM at the first rename: the run ends by it (status 143), after the last rename.
at 1 SIGTERM "$bin/gen_moves" --games 5 --seed 5 --out g.pgn --report g.json --quiet
status=$?
[[ $status == 143 ]] || fail "SIGTERM at a rename: status $status, not 143"
[[ $(games_in g.json) == 5 && $(grep -c '^\[Event' g.pgn) == 5 ]] || fail "SIGTERM at the first rename cut the renames"
no_leftovers g.pgn.lock g.json.lock g.json.tmp.* g.pgn.tmp.*

# tensorize --split killed between its parts: tensorize merge, and Python, read a whole run's parts.
"$bin/gen_moves" --games 30 --seed 6 --out a.pgn --quiet
"$bin/gen_moves" --games 30 --seed 7 --out b.pgn --quiet
"$bin/tensorize" --quiet --in a.pgn --out set.h5 --split 0.5,0.5
rows() { "$python" -c "import h5py, sys; print(len(h5py.File(sys.argv[1])['positions']))" "$1"; }
old_val=$(rows set.val.h5)
for reader in merge python; do
  at 2 SIGKILL "$bin/tensorize" --quiet --in b.pgn --out set.h5 --split 0.5,0.5
  [[ $(rows set.val.h5) == "$old_val" ]] || fail "$reader: the kill did not stop between the parts' renames"
  if [[ $reader == merge ]]; then
    "$bin/tensorize" merge set.val.h5 --out merged.h5 > /dev/null 2> err || fail "tensorize merge could not read the part: $(cat err)"
  else
    "$python" -c "import legalnet, sys; legalnet.Dataset(sys.argv[1])" set.val.h5 || fail "Python could not read the part"
  fi
  [[ $(rows set.val.h5) != "$old_val" ]] || fail "$reader did not finish the killed run's renames"
  no_leftovers set.train.h5.lock set.val.h5.lock set.*.tmp.*
  "$bin/tensorize" --quiet --in a.pgn --out set.h5 --split 0.5,0.5
done

# A journal planted beside an input, naming another folder's file: nothing moves.
mkdir -p victim
echo precious > victim/data.h5
echo partial > victim/data.h5.tmp.1.0
printf 'legalnet-commit 1\0%s\0%s\0%s\0%s\0' "$PWD/g.pgn.tmp.1.0" "$PWD/g.pgn" "$PWD/victim/data.h5.tmp.1.0" \
  "$PWD/victim/data.h5" > g.pgn.lock
"$bin/tensorize" --quiet --in g.pgn --out y.h5 || fail "a planted journal stopped the reader"
[[ $(cat victim/data.h5) == precious ]] || fail "a planted journal moved another folder's file"
finish "renames_together ok: a run's outputs take their names together"
