#!/usr/bin/env bash
# hostile.sh BIN_DIR PYTHON: the four tools as a hostile but realistic user runs them. Each case
# of the table runs a tool as a process and checks its exit status, that stderr is exactly one
# line matching a pattern (no trace, no HDF5 dump), that no signal ended it, that every file
# that existed before is byte-identical afterwards and that no temporary is left behind.
# The classes: outputs that are not plain new files, untrusted values, input
# that is not PGN, exceptions of every type, faults around the run, options, messages.
set -uo pipefail
bin=$(cd "$1" && pwd) python=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0 cases=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

snapshot() { find . -type f ! -name '*.log' -print0 | sort -z | xargs -0 -r sha256sum; }

# expect STATUS REGEX CMD...: one case of the table.
expect() {
  local status=$1 regex=$2
  shift 2
  cases=$((cases + 1))
  local before after err rc
  before=$(snapshot)
  err=$("$@" 2>&1 >/dev/null </dev/null)
  rc=$?
  after=$(snapshot)
  if ((rc >= 128)); then
    fail "$* ended by signal $((rc - 128)): $err"
  elif ((rc != status)); then
    fail "$*: exit $rc, expected $status: $err"
  elif [[ $(printf '%s\n' "$err" | wc -l) -ne 1 ]] || ! [[ $err =~ $regex ]]; then
    fail "$*: stderr is not one line matching /$regex/: $err"
  fi
  # A failed run leaves every earlier file as it was, and (unless the case allows it, as a
  # stream that meets a bad row after training began) adds none.
  if ((rc != 0)); then
    local changed
    if [[ -n ${ALLOW_NEW_FILES:-} ]]; then
      changed=$(comm -23 <(echo "$before" | sort) <(echo "$after" | sort))
    else
      changed=$(diff <(echo "$before") <(echo "$after"))
    fi
    [[ -z $changed ]] || fail "$*: changed files: $(echo "$changed" | head -5)"
  fi
  if [[ -n $(find . -name '*.tmp.*' -print -quit) ]]; then
    fail "$*: left a temporary: $(find . -name '*.tmp.*')"
    find . -name '*.tmp.*' -delete
  fi
}

# Fixtures: games, a dataset, a tiny model.
set -e
"$bin/gen_moves" -q --games 40 --seed 3 --out games.pgn
"$bin/gen_moves" -q --games 400 --seed 4 --out many.pgn
"$bin/tensorize" -q --in games.pgn --out data.h5
printf '[Event "e"]\n\n*\n' > empty_game.pgn
"$bin/tensorize" -q --in empty_game.pgn --out empty.h5
"$bin/train" -q --data data.h5 --out run --model mlp --hidden 16 --max-steps 3 --batch-size 16 --eval-every 3 \
  --threads 1 --device cpu --precision fp32
cp run/model.pt model.pt
set +e
mkdir folder
ln -s games.pgn link.pgn
printf 'This is a README.\nNo games here.\n' > readme.pgn
cp games.pgn fake.pgn.zst

# 1. Outputs that are not plain new files.
expect 1 "^gen_moves: cannot write '/dev/full': No space left on device$" "$bin/gen_moves" --games 5 --out /dev/full
expect 1 "^gen_moves: 'folder' is a directory, not a file to write$" "$bin/gen_moves" --games 2 --out folder
expect 1 "^tensorize: --out 'games.pgn' is also an input of this run \(--in 'games.pgn'\)" \
  "$bin/tensorize" --in games.pgn --out games.pgn
expect 1 "^tensorize: --out 'link.pgn' is also an input of this run \(--in 'games.pgn'\)" \
  "$bin/tensorize" --in games.pgn --out link.pgn
expect 1 "^tensorize: --out 'data.h5' is also an input of this run \(a shard 'data.h5'\)" \
  "$bin/tensorize" merge --out data.h5 data.h5 empty.h5
expect 1 "^tensorize: 'folder' is a directory, not a file to write$" "$bin/tensorize" --in games.pgn --out folder
expect 1 "^tensorize: '/dev/null' is a device, FIFO or socket; this output must be a regular file$" \
  "$bin/tensorize" --in games.pgn --out /dev/null
expect 1 "^evaluate: --picture 'model.pt' is also an input of this run \(--model 'model.pt'\)" \
  "$bin/evaluate" --model model.pt --fen startpos --picture model.pt
expect 1 "^evaluate: --picture 'r.json' and --report 'r.json' are the same file$" \
  "$bin/evaluate" --model model.pt --fen startpos --picture r.json --report r.json
expect 1 "^gen_moves: --stats-json 'g.pgn' and --out 'g.pgn' are the same file$" \
  "$bin/gen_moves" --games 2 --out g.pgn --stats-json g.pgn
expect 1 "^train: --out 'data.h5' is a file; it must be a run folder" "$bin/train" --data data.h5 --out data.h5
expect 1 "^train: 'run' already holds a run; use --resume" "$bin/train" --data data.h5 --out run

# Written through: a symbolic link keeps pointing at the new file, a FIFO gets the stream.
cases=$((cases + 1))
ln -s target.pgn out-link.pgn
"$bin/gen_moves" -q --games 2 --out out-link.pgn
[[ -L out-link.pgn && -s target.pgn ]] || fail "a symbolic link output was replaced instead of written through"
cases=$((cases + 1))
mkfifo pipe
timeout 30 cat pipe > from-pipe.pgn &
timeout 30 "$bin/gen_moves" -q --games 2 --seed 9 --out pipe
wait
"$bin/gen_moves" -q --games 2 --seed 9 --out direct.pgn
cmp -s from-pipe.pgn direct.pgn || fail "a FIFO output did not receive the games"
rm -f pipe

# 2. Untrusted values inside valid files (needs h5py to forge them).
if [[ -n $python ]] && "$python" -c "import h5py" 2>/dev/null; then
  cp data.h5 forged.h5
  "$python" -c "import h5py; f = h5py.File('forged.h5', 'r+'); f['positions'][5, 2, 3, 4] = 7; f.close()"
  expect 1 "^train: forged.h5: row 5: positions\[2\]\[3\]\[4\] is 7, not -1, 0 or \+1$" \
    "$bin/train" --data forged.h5 --out forged-run --max-steps 1 --device cpu
  ALLOW_NEW_FILES=1 expect 1 "^train: forged.h5: row 5: positions\[2\]\[3\]\[4\] is 7, not -1, 0 or \+1$" \
    "$bin/train" -q --data forged.h5 --out forged-run --max-steps 1 --device cpu --data-mode stream --batch-size 8
  cp data.h5 forged2.h5
  "$python" -c "import h5py; f = h5py.File('forged2.h5', 'r+'); f['castling'][3] = 99; f.close()"
  expect 1 "^train: forged2.h5: row 3: castling is 99, not 0..15$" \
    "$bin/train" --data forged2.h5 --out forged-run --max-steps 1 --device cpu
  # A failed --force run leaves the finished one in place.
  cp -r run kept && cp kept/model.pt kept-model.pt
  expect 1 "^train: forged.h5: row 5" "$bin/train" --data forged.h5 --out kept --force --device cpu
  cmp -s kept/model.pt kept-model.pt || fail "train --force lost the previous run"
else
  echo "skipped: forged datasets need a Python with h5py"
fi

# 3. Files that are not PGN fail the run; a PGN file never does.
expect 1 "^tensorize: readme.pgn: not PGN: no tag pair, move number or result in 2 lines$" \
  "$bin/tensorize" --in readme.pgn --out never.h5
expect 1 "^tensorize: 'fake.pgn.zst' is not zstd data, as its name says$" "$bin/tensorize" --in fake.pgn.zst --out never.h5
expect 1 "^tensorize: 'model.pt' is not zstd data|^tensorize: model.pt:[0-9]+: binary data" \
  "$bin/tensorize" --in model.pt --out never.h5

# 4-5. Exceptions of every type and faults around the run become one line, never a crash.
expect 1 "^evaluate: --fen: FEN field 1: 3 ranks, expected 8$" "$bin/evaluate" --model model.pt --fen "8/8/8 w - - 0 1"
expect 1 "^evaluate: games.pgn: not a torch archive|^evaluate: games.pgn: cannot read as a torch archive" \
  "$bin/evaluate" --model games.pgn --games 1
expect 1 "^tensorize: full.h5: .*File too large$" \
  bash -c "trap '' XFSZ; ulimit -f 100; exec '$bin/tensorize' -q --in many.pgn --out full.h5"
expect 1 "^tensorize: full.h5: .*File too large$" \
  bash -c "trap '' XFSZ; ulimit -f 40; exec '$bin/tensorize' merge --copy --out full.h5 data.h5 data.h5"
expect 1 "^gen_moves: cannot write 'full.pgn': File too large$" \
  bash -c "trap '' XFSZ; ulimit -f 20; exec '$bin/gen_moves' --games 300 --out full.pgn"
cases=$((cases + 1))
"$bin/gen_moves" --games 3 --out no-stderr.pgn 2>&- || fail "gen_moves with stderr closed: exit $?"
[[ -s no-stderr.pgn ]] || fail "gen_moves with stderr closed wrote nothing"
cases=$((cases + 1))
"$bin/tensorize" --in games.pgn --out full-stderr.h5 2>/dev/full || fail "tensorize with stderr on a full device: exit $?"

# 6. Options: checked by the parser, before any work, with the range in plain numbers.
expect 2 "^gen_moves: --games: -1 is not a number in 0\.\.1e\+12 \(see --help\)$" "$bin/gen_moves" --games -1 --out x.pgn
expect 2 "^train: --lr: nan is not a number in" "$bin/train" --data data.h5 --out r --lr nan
expect 2 "^train: --weight-decay: -1 is not a number in 0\.\.10" "$bin/train" --data data.h5 --out r --weight-decay -1
expect 2 "^train: --eval-every: 0 is not a number in 1\.\." "$bin/train" --data data.h5 --out r --eval-every 0
expect 2 "^train: --optimizer: adamx not in \{adam,adamw,sgd\}" "$bin/train" --data data.h5 --out r --optimizer adamx
expect 2 "^train: --data-mode: disk not in" "$bin/train" --data data.h5 --out r --data-mode disk
expect 2 "^train: --device: device 'gpu': expected auto, cpu, cuda or cuda:N" "$bin/train" --data data.h5 --out r --device gpu
expect 2 "^train: --inputs: pixels not in" "$bin/train" --data data.h5 --out r --inputs pixels
expect 2 "^train: --(force|resume) excludes --(resume|force) \(see --help\)$" "$bin/train" --data data.h5 --out run --force --resume
expect 2 "^evaluate: --threshold: 1\.5 is not a number in 0\.\.1" "$bin/evaluate" --model model.pt --threshold 1.5
expect 2 "^evaluate: --games: Value 2000000000 not in range" "$bin/evaluate" --model model.pt --games 2000000000
expect 2 "^evaluate: --opponent: stockfish not in" "$bin/evaluate" --model model.pt --games 1 --opponent stockfish
expect 2 "^tensorize: --threads: Value 0 not in range" "$bin/tensorize" --in games.pgn --out t.h5 --threads 0

# 7. Messages that say what is wrong, in the user's words.
expect 1 "^evaluate: --data: empty.h5 holds no positions to measure$" "$bin/evaluate" --model model.pt --data empty.h5
expect 1 "^gen_moves: FEN field 3: castling letter 'H' is Chess960's" \
  "$bin/gen_moves" perft --fen "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1" --depth 1

echo "$cases cases, $failures failures"
((failures == 0))
