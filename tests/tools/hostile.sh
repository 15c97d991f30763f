#!/usr/bin/env bash
# hostile.sh BIN_DIR PYTHON [PART]: the four tools as a hostile but realistic user runs them. Each case
# of the table runs a tool as a process and checks its exit status, that stderr is exactly one
# line matching a pattern (no trace, no HDF5 dump), that no signal ended it, that every file
# that existed before is byte-identical afterwards and that no temporary is left behind.
# The classes: outputs that are not plain new files, untrusted values, input
# that is not PGN, exceptions of every type, faults around the run, options, messages.
set -uo pipefail
bin=$(cd "$1" && pwd) python=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
source "$src/tests/tools/checks.sh"
cd "$work"
cases=0

snapshot() { find . -type f ! -name '*.log' -print0 | sort -z | xargs -0 -r sha256sum; }

# expect STATUS REGEX CMD...: one case of the table. Every case runs under a time limit
# (HOSTILE_TIMEOUT seconds, 60 by default): a tool that waits for ever on a FIFO or reads
# /dev/zero for ever fails its case instead of hanging the suite.
expect() {
  local status=$1 regex=$2
  shift 2
  cases=$((cases + 1))
  local before after err rc
  before=$(snapshot)
  err=$(timeout -k 5 "${HOSTILE_TIMEOUT:-60}" "$@" 2>&1 >/dev/null </dev/null)
  rc=$?
  after=$(snapshot)
  if ((rc == 124 || rc == 137)); then
    fail "$*: no answer within ${HOSTILE_TIMEOUT:-60} s (a hang): $err"
  elif ((rc >= 128)); then
    fail "$* ended by signal $((rc - 128)): $err"
  elif ((rc != status)); then
    fail "$*: exit $rc, expected $status: $err"
  elif [[ $(printf '%s\n' "$err" | wc -l) -ne 1 ]] || ! [[ $err =~ $regex ]]; then
    fail "$*: stderr is not one line matching /$regex/: $err"
  elif printf '%s' "$err" | LC_ALL=C grep -q '[[:cntrl:]]'; then  # text from files is escaped
    fail "$*: stderr holds a control character: $(printf '%s' "$err" | od -c | head -3)"
  fi
  # A failed run leaves every earlier file as it was, and (unless the case allows it, as a
  # stream that meets a bad row after training began) adds none. (A case that moves files by
  # design, train --force, sets ALLOW_CHANGES and checks the files it keeps itself.)
  if ((rc != 0)) && [[ -z ${ALLOW_CHANGES:-} ]]; then
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
"$bin/train" -q --data data.h5 --out run --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --eval-every 3 \
  --threads 1 --device cpu --precision fp32
cp run/model.safetensors model.safetensors
set +e
mkdir folder
ln -s games.pgn link.pgn
printf 'This is a README.\nNo games here.\n' > readme.pgn
cp games.pgn fake.pgn.zst

# Every reader of a dataset: train, evaluate and merge, each expected to name the file (both
# parts use it). readers FILE REGEX: the three runs end with one line "<tool>: FILE: REGEX".
readers() {
  local file=$1 regex=$2
  expect 1 "^train: $file: $regex" "$bin/train" --data "$file" --out never-run --max-steps 1 --device cpu
  expect 1 "^evaluate: $file: $regex" "$bin/evaluate" --model model.safetensors --data "$file" --games 0 --device cpu
  expect 1 "^tensorize: $file: $regex" "$bin/tensorize" merge --out never.h5 "$file" data.h5
}

# The table runs whole, or in two parts that ctest runs side by side (PART 1: classes 1 to 5 and
# issue 60's; PART 2: issue 35's); each part makes the fixtures above for itself.
part=${3:-all}
if [[ $part != 2 ]]; then

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
expect 1 "^evaluate: --picture 'model.safetensors' is also an input of this run \(--model 'model.safetensors'\)" \
  "$bin/evaluate" --model model.safetensors --fen startpos --picture model.safetensors
expect 1 "^evaluate: --picture 'r.json' and --report 'r.json' are the same file$" \
  "$bin/evaluate" --model model.safetensors --fen startpos --picture r.json --report r.json
expect 1 "^gen_moves: --report 'g.pgn' and --out 'g.pgn' are the same file$" \
  "$bin/gen_moves" --games 2 --out g.pgn --report g.pgn
expect 1 "^train: --out 'data.h5' is a file; it must be a run folder" "$bin/train" --data data.h5 --out data.h5
expect 1 "^train: 'run' already holds a run; use --resume" "$bin/train" --data data.h5 --out run
# --replan: counts past int64, and an end past the epochs' steps, refused in one line each.
expect 1 "^train: --replan '5:99999999999999999999': '5:99999999999999999999' is not AT:STEPS" \
  "$bin/train" --data data.h5 --out replan-run --replan 5:99999999999999999999
expect 1 "^train: --replan 1:1099511627776: past the [0-9]+ steps of --epochs$" \
  "$bin/train" --data data.h5 --out replan-run --arch mlp --hidden 16 --batch-size 16 --max-steps 3 --replan 1:1099511627776 \
  --device cpu
cases=$((cases + 1))
[[ ! -e replan-run ]] || fail "a refused --replan left a run folder"

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

# 1b. No shell: a picture's name goes to rsvg-convert as an argument, whatever it holds.
for name in "O'Brien.png" "x'; touch pwned; '.png" '$(touch pwned).png' '-o.png' 'two words.png'; do
  cases=$((cases + 1))
  if ! err=$("$bin/evaluate" -q --model model.safetensors --fen startpos --picture "$name" --device cpu 2>&1 >/dev/null); then
    fail "evaluate --picture '$name': $err"
  elif [[ $(head -c 4 -- "$name" | od -An -c | tr -d ' ') != "211PNG" ]]; then
    fail "evaluate --picture '$name' wrote no PNG under that name"
  fi
  [[ ! -e pwned ]] || fail "evaluate --picture '$name' ran a command"
  rm -f -- "$name" pwned
done
expect 1 "^evaluate: cannot write 'p.png': rsvg-convert \(Debian package librsvg2-bin\) failed or is missing; use .svg$" \
  env PATH=/nonexistent "$bin/evaluate" --model model.safetensors --fen startpos --picture p.png --device cpu

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
  cp -r run kept && cp kept/model.safetensors kept-model.safetensors
  expect 1 "^train: forged.h5: row 5" "$bin/train" --data forged.h5 --out kept --force --device cpu
  cmp -s kept/model.safetensors kept-model.safetensors || fail "train --force lost the previous run"
  # Two --force runs that fail after training began (a bad row met by the stream): the finished
  # run waits in replaced/ through both, byte for byte (the second once deleted it).
  cp -r run kept2
  for attempt in 1 2; do
    ALLOW_CHANGES=1 expect 1 "^train: forged.h5: row 5" "$bin/train" -q --data forged.h5 --out kept2 --force \
      --device cpu --data-mode stream --batch-size 8 --arch mlp --hidden 16 --threads 1
  done
  cmp -s kept2/replaced/model.safetensors kept-model.safetensors || fail "two failed train --force runs lost the finished model"
  cmp -s kept2/replaced/checkpoint.safetensors run/checkpoint.safetensors || fail "two failed train --force runs lost the checkpoint"
  [[ ! -e kept2/model.safetensors ]] || fail "a failed train --force run left a model"
  rm -rf kept2

  # 2a. Attributes of any shape and type: each is checked before a value is read into memory
  # (an int64 array read into one variable once overwrote the stack).
  "$python" - <<'PY'
import shutil, h5py, numpy as np
def forge(name, change):
    shutil.copy("data.h5", name)
    with h5py.File(name, "r+") as f:
        change(f.attrs)
def put(key, value, **kw):
    return lambda a: (a.__delitem__(key), a.create(key, value, **kw))
forge("attr-array64.h5", put("format_version", np.arange(64, dtype=np.int64) + 0x4141414141))
forge("attr-pair.h5", put("num_positions", np.array([1, 2], dtype=np.int64)))
forge("attr-matrix.h5", put("num_positions", np.ones((1, 1), dtype=np.int64)))
forge("attr-float.h5", put("format_version", 1.0))
forge("attr-bool.h5", put("format_version", True))
forge("attr-empty.h5", put("num_positions", h5py.Empty("i8")))
forge("attr-strings.h5", put("format", np.array([b"legalnet-dataset"] * 3)))
forge("attr-format-int.h5", put("format", 7))
forge("attr-sources-int.h5", put("sources", np.arange(4)))
forge("attr-sources-2d.h5", put("sources", np.array([[b"a.pgn", b"b.pgn"]] * 2)))
forge("attr-dedupe-string.h5", put("dedupe", "yes"))
forge("attr-fixed-ok.h5", put("format", np.bytes_(b"legalnet-dataset")))
PY
  readers attr-array64.h5 "attribute 'format_version' is not a single value \(it holds 64 in 1 dimensions\)$"
  readers attr-pair.h5 "attribute 'num_positions' is not a single value \(it holds 2 in 1 dimensions\)$"
  readers attr-matrix.h5 "attribute 'num_positions' is not a single value \(it holds 1 in 2 dimensions\)$"
  readers attr-float.h5 "attribute 'format_version' is not an integer$"
  readers attr-bool.h5 "attribute 'format_version' is not an integer$"
  readers attr-empty.h5 "attribute 'num_positions' has no value \(an empty dataspace\)$"
  readers attr-strings.h5 "attribute 'format' is not a single string$"
  readers attr-format-int.h5 "attribute 'format' is not a string$"
  expect 1 "^tensorize: attr-sources-int.h5: attribute 'sources' is not a string$" \
    "$bin/tensorize" merge --out never.h5 attr-sources-int.h5
  expect 1 "^tensorize: attr-sources-2d.h5: attribute 'sources' is not a list \(it has 2 dimensions\)$" \
    "$bin/tensorize" merge --out never.h5 attr-sources-2d.h5
  expect 1 "^tensorize: attr-dedupe-string.h5: attribute 'dedupe' is not an integer$" \
    "$bin/tensorize" merge --out never.h5 attr-dedupe-string.h5
  cases=$((cases + 1))  # a fixed-length string, as h5py writes numpy bytes, is still read
  "$bin/tensorize" -q merge --copy --out fixed-ok-merged.h5 attr-fixed-ok.h5 ||
    fail "a fixed-length 'format' string was not read"
  rm -f fixed-ok-merged.h5

  # 2b. Values stored outside the file: external raw storage (any file the user can read, or a
  # FIFO that never ends) and virtual datasets other than merge's own are refused on open.
  mkfifo never-ending
  cp data.h5 shard-a.h5 && cp data.h5 shard-b.h5 && cp data.h5 '100%b.h5'
  ln -s vds-self.h5 self-alias.h5
  "$bin/tensorize" -q merge --out joined.h5 shard-a.h5 shard-b.h5
  cp joined.h5 joined-fifo.h5 && cp data.h5 shard-f.h5
  "$bin/tensorize" -q merge --out joined-fifo.h5 shard-a.h5 shard-f.h5
  printf 'root:x:0:0:root:/root:/bin/bash\n%.0s' {1..200} > secret.txt
  "$python" - <<'PY'
import shutil, h5py, numpy as np
n = h5py.File("data.h5", "r")["castling"].shape[0]
def forge(name, change, base="data.h5"):
    shutil.copy(base, name)
    with h5py.File(name, "r+") as f:
        change(f)
def external(column, target):
    def change(f):
        dtype, shape = f[column].dtype, f[column].shape
        del f[column]
        f.create_dataset(column, shape=shape, dtype=dtype, external=[(target, 0, h5py.h5f.UNLIMITED)])
    return change
def virtual(column, file_name, source_name=None, rows=None, parent=""):
    def change(f):
        dtype, shape = f[column].dtype, f[column].shape
        layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
        source = h5py.VirtualSource(file_name, source_name or column, shape=shape)
        if rows is None:
            layout[...] = source
        else:
            layout[:rows] = source[:rows]
        del f[column]
        f.create_virtual_dataset(column, layout)
    return change
forge("ext-passwd.h5", external("castling", "secret.txt"))
forge("ext-fifo.h5", external("positions", "never-ending"))
forge("ext-games.h5", external("games/plies", "secret.txt"))
with h5py.File("secret.h5", "w") as f:
    f["castling"] = np.zeros(n, np.uint8)
forge("vds-foreign.h5", virtual("castling", "secret.h5"))
forge("vds-fifo.h5", virtual("castling", "never-ending"))
forge("vds-self.h5", virtual("castling", "self-alias.h5"))  # a link to vds-self.h5
forge("vds-dot.h5", virtual("castling", "."))
forge("vds-pattern.h5", virtual("castling", "100%%b.h5"))  # HDF5 takes only '%%' without unlimited rows
forge("vds-rename.h5", virtual("castling", "data.h5", source_name="en_passant"))
forge("vds-half.h5", virtual("castling", "data.h5", rows=n // 2))
forge("vds-games.h5", virtual("games/plies", "data.h5"))
forge("vds-game.h5", virtual("game", "data.h5"))
forge("vds-nested.h5", virtual("castling", "ext-passwd.h5"))
PY
  rm shard-f.h5 && mkfifo shard-f.h5
  readers ext-passwd.h5 "dataset 'castling' keeps its values in an external file; only data inside the file is read$"
  readers ext-fifo.h5 "dataset 'positions' keeps its values in an external file; only data inside the file is read$"
  readers ext-games.h5 "dataset 'games/plies' keeps its values in an external file; only data inside the file is read$"
  readers vds-foreign.h5 "dataset 'castling' is joined from 'secret.h5', which is not a legalnet dataset$"
  readers vds-fifo.h5 "dataset 'castling' is joined from 'never-ending', which is not a regular file$"
  readers joined-fifo.h5 "dataset 'positions' is joined from 'shard-f.h5', which is not a regular file$"
  readers vds-self.h5 "dataset 'castling' is joined from 'self-alias.h5', which is this file itself$"
  readers vds-dot.h5 "dataset 'castling' is joined from '.', which is not a regular file$"
  readers vds-pattern.h5 "dataset 'castling' is joined from '100%%b.h5', a name pattern merge never writes$"
  readers vds-rename.h5 "dataset 'castling' is joined from 'data.h5' \(its dataset 'en_passant', not 'castling'\)$"
  readers vds-half.h5 "dataset 'castling' is joined from 'data.h5', which no longer holds the rows it was joined with \(re-run merge\)$"
  readers vds-games.h5 "dataset 'games/plies' has a storage layout this reader does not take \(a virtual dataset\)$"
  readers vds-game.h5 "dataset 'game' has a storage layout this reader does not take \(a virtual dataset\)$"
  readers vds-nested.h5 "dataset 'castling' is joined from 'ext-passwd.h5', whose 'castling' is not stored in that file itself$"
  readers never-ending "not a regular file \(a dataset is read from a file on disk\)$"
  expect 1 "^tensorize: joined.h5 is itself joined from shards: merge its shards, or merge with --copy$" \
    "$bin/tensorize" merge --out never.h5 joined.h5 data.h5
  # A merge onto a shard that one of its inputs reads: refused before any work, copied or not
  # (the copy once replaced shard-a.h5, leaving joined.h5 mapping rows it no longer holds).
  expect 1 "^tensorize: --out 'shard-a.h5' is also an input of this run \(a shard of 'joined.h5'" \
    "$bin/tensorize" merge --copy --out shard-a.h5 joined.h5 data.h5
  expect 1 "^tensorize: --out 'shard-b.h5' is also an input of this run \(a shard of 'joined.h5'" \
    "$bin/tensorize" merge --out shard-b.h5 data.h5 joined.h5
  expect 1 "^tensorize: 100%b.h5: a shard whose path has a '%' cannot be joined virtually; merge with --copy$" \
    "$bin/tensorize" merge --out never.h5 '100%b.h5' data.h5
  cases=$((cases + 1))  # merge's own virtual file is still read, and copied whole
  "$bin/tensorize" -q merge --copy --out joined-copy.h5 joined.h5 '100%b.h5' ||
    fail "merge --copy of a joined file and a '%' shard failed"
  rm -f never-ending shard-f.h5 joined-copy.h5

  # HDF5_VDS_PREFIX would make HDF5 look for a joined file's shards elsewhere than the folder
  # the readers checked them in: refused while it is set.
  mkdir -p elsewhere && cp forged.h5 elsewhere/shard-a.h5 && cp forged.h5 elsewhere/shard-b.h5
  HDF5_VDS_PREFIX=elsewhere readers joined.h5 "dataset 'positions' is joined from shards, and HDF5_VDS_PREFIX \('elsewhere'\) would make HDF5 read them from elsewhere than beside the file; unset it$"
  cases=$((cases + 1))  # a file that is not joined does not care
  HDF5_VDS_PREFIX=elsewhere "$bin/tensorize" -q merge --copy --out prefix-copy.h5 data.h5 ||
    fail "HDF5_VDS_PREFIX refused a file that is not joined"
  rm -rf elsewhere prefix-copy.h5

  # 2c. Sizes a file claims against what it stores: 2^40 rows in a 40 KB file (chunks never
  # written read as zeros), a column never written, a filter that stores any chunk in a few
  # bytes. Refused before the readers allocate what the header claims.
  "$python" - <<'PY'
import shutil, h5py, numpy as np
src = h5py.File("data.h5", "r")
def huge(name, rows):
    with h5py.File(name, "w") as f:
        for key, value in src.attrs.items():
            f.attrs[key] = value
        f.attrs["num_positions"] = np.int64(rows)
        for path, obj in [(k, src[k]) for k in src] + [("games/" + k, src["games"][k]) for k in src["games"]]:
            if isinstance(obj, h5py.Dataset):
                n = rows if "/" not in path else obj.shape[0]
                f.create_dataset(path, shape=(n,) + obj.shape[1:], dtype=obj.dtype,
                                 chunks=(min(n, 256),) + obj.shape[1:], compression="gzip")
                if "/" in path:
                    f[path][...] = obj[...]
huge("claims-2-40.h5", 2**40)
def forge(name, column, **create):
    shutil.copy("data.h5", name)
    with h5py.File(name, "r+") as f:
        values = f[column][...]
        del f[column]
        d = f.create_dataset(column, shape=values.shape, dtype=values.dtype, **create)
        if create.get("chunks"):
            d[...] = values
forge("unwritten.h5", "castling")
forge("scaleoffset.h5", "castling", chunks=True, scaleoffset=0)
forge("fletcher.h5", "castling", chunks=True, fletcher32=True, compression="gzip", shuffle=True)
PY
  readers claims-2-40.h5 "dataset 'positions' claims 492581209243648 bytes of values but stores 0 compressed bytes in a file of [0-9]+ \(a forged or truncated file\)$"
  readers unwritten.h5 "dataset 'castling' claims [0-9]+ bytes of values but stores 0 bytes in a file of [0-9]+ \(a forged or truncated file\)$"
  readers scaleoffset.h5 "dataset 'castling' is stored through HDF5 filter 6, which this reader does not take \(gzip and shuffle only\)$"
  cases=$((cases + 1))  # gzip, shuffle and checksums, as h5py writes them, are read
  "$bin/tensorize" -q merge --copy --out fletcher-copy.h5 fletcher.h5 || fail "a gzip+shuffle+fletcher32 column was refused"
  rm -f fletcher-copy.h5
else
  echo "skipped: forged datasets need a Python with h5py"
fi

# 3. Files that are not PGN fail the run; a PGN file never does.
expect 1 "^tensorize: readme.pgn: not PGN: no tag pair, move number or result in 2 lines$" \
  "$bin/tensorize" --in readme.pgn --out never.h5
expect 1 "^tensorize: 'fake.pgn.zst' is not zstd data, as its name says$" "$bin/tensorize" --in fake.pgn.zst --out never.h5
expect 1 "^tensorize: 'model.safetensors' is not zstd data|^tensorize: model.safetensors:[0-9]+: binary data" \
  "$bin/tensorize" --in model.safetensors --out never.h5

# 3b. Streams read with bounded memory: a 16 MiB cap on a line (a 1 KB .zst of one endless
# line: its game is skipped, and --strict stops there; issue 35 below), games longer than the 75-move rule allows skipped without keeping their moves, all
# under a 1 GB address-space limit.
{
  printf '[Event "e"]\n\n'
  head -c 20000000 /dev/zero | tr '\0' 'a'
} | zstd -q -o long-line.pgn.zst
expect 1 "^tensorize: long-line.pgn.zst: game 1 \(line 1\): line 3: a line longer than 16 MiB$" \
  bash -c "ulimit -v 1000000; exec '$bin/tensorize' -q --strict --in long-line.pgn.zst --out never.h5"
{
  printf '[Event "endless"]\n\n'
  yes '1. Nf3 Nf6 2. Ng1 Ng8' | head -n 3000000
  printf '*\n\n[Event "next"]\n\n1. e4 e5 *\n'
} | zstd -q -o endless.pgn.zst
cases=$((cases + 1))
err=$(bash -c "ulimit -v 1000000; exec '$bin/tensorize' -q --threads 2 --in endless.pgn.zst --out endless.h5 --report endless.json" 2>&1)
rc=$?
if ((rc != 0)); then
  fail "tensorize on endless.pgn.zst: exit $rc: $(echo "$err" | head -3)"
elif ! [[ $err =~ endless\.pgn\.zst:\ game\ 1\ \(line\ 1\):\ line\ [0-9]+:\ more\ than\ 17697\ moves ]]; then
  fail "tensorize on endless.pgn.zst did not name the endless game: $err"
elif [[ $("$python" -c "import json; s = json.load(open('endless.json')); print(s['games_kept'], s['positions'])" 2>&1) != "1 2" ]]; then
  fail "tensorize on endless.pgn.zst: $(cat endless.json)"
fi
rm -f endless.h5 endless.json

# 3c. Text from files and command lines reaches stderr escaped: a terminal title, a screen
# clear or a colour from a Variant tag, a FEN tag, a move, a malformed tag, --fen, a dataset's
# format attribute shows as \xNN, never as the escape sequence itself.
esc=$'\e' bel=$'\a'
printf '[Event "e"]\n[Variant "%s]0;owned%s"]\n\n1. e4 *\n' "$esc" "$bel" > variant-esc.pgn
printf '[Event "e"]\n[FEN "%s[2J8/8/8/8/8/8/8/8 w - - 0 1"]\n\n1. e4 *\n' "$esc" > fen-esc.pgn
printf '[Event "e"]\n\n1. e4 e5 2. N%s]2%sf3 *\n' "$esc" "$bel" > move-esc.pgn
printf '[Event "e"]\n[Site%s[2J]\n\n1. e4 *\n' "$esc" > tag-esc.pgn
expect 1 '^tensorize: variant-esc.pgn: game 1 \(line 1\): line 2: a \\x1b\]0;owned\\x07 game \(Variant tag\), not standard chess$' \
  "$bin/tensorize" --strict --in variant-esc.pgn --out never.h5
expect 1 '^tensorize: fen-esc.pgn: game 1 \(line 1\): line 2: FEN tag: FEN field 1, rank 8: bad piece letter .\\x1b.$' \
  "$bin/tensorize" --strict --in fen-esc.pgn --out never.h5
expect 1 '^tensorize: move-esc.pgn: game 1 \(line 1\): line 3, ply 3: move .N\\x1b\]2\\x07f3.: ' \
  "$bin/tensorize" --strict --in move-esc.pgn --out never.h5
expect 1 '^tensorize: tag-esc.pgn: game 1 \(line 1\): line 2: malformed tag \(no quoted value\): \[Site\\x1b\[2J\]$' \
  "$bin/tensorize" --strict --in tag-esc.pgn --out never.h5
expect 1 '^evaluate: --fen: FEN field 1, rank 8: bad piece letter .\\x1b.$' \
  "$bin/evaluate" --model model.pt --fen "${esc}]0;owned${bel}rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
expect 1 '^gen_moves: FEN field 2: side to move .\\x1b\[2J., expected w or b$' \
  "$bin/gen_moves" perft --fen "8/8/8/8/8/8/8/K6k ${esc}[2J - - 0 1" --depth 1
if [[ -n $python ]] && "$python" -c "import h5py" 2>/dev/null; then
  cp data.h5 format-esc.h5
  "$python" -c "import h5py; f = h5py.File('format-esc.h5', 'r+'); f.attrs['format'] = '\x1b]0;owned\x07\x9b2J'; f.close()"
  expect 1 "^train: format-esc.h5: format '\\\\x1b\\]0;owned\\\\x07\\\\xc2\\\\x9b2J' is not 'legalnet-dataset'$" \
    "$bin/train" --data format-esc.h5 --out never-run --device cpu
fi

# 4-5. Exceptions of every type and faults around the run become one line, never a crash.
expect 1 "^evaluate: --fen: FEN field 1: 3 ranks, expected 8$" "$bin/evaluate" --model model.safetensors --fen "8/8/8 w - - 0 1"
expect 1 "^evaluate: games.pgn: not a safetensors file" \
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

# 5b. A failed run loses no earlier work, and every output is checked before the work: a missing
# folder or a name JSON cannot hold stops the run before any file takes its name (tensorize once
# renamed its dataset into place first, evaluate played all its games first).
bad=$'s\xff.json'
expect 1 "^tensorize: --report 'nodir/s.json': its folder 'nodir' does not exist$" \
  "$bin/tensorize" --in games.pgn --out new.h5 --report nodir/s.json
expect 1 "^tensorize: --report 's\\\\xff.json' is not UTF-8 text, which --report 's\\\\xff.json' \(JSON\) cannot hold" \
  "$bin/tensorize" --in games.pgn --out new.h5 --report "$bad"
expect 1 "^tensorize: --out 'nodir/new.h5': its folder 'nodir' does not exist$" \
  "$bin/tensorize" --in games.pgn --out nodir/new.h5 --report s.json
expect 1 "^tensorize: --out 'readme.pgn/x.train.h5': 'readme.pgn' is not a folder$" \
  "$bin/tensorize" --in games.pgn --out readme.pgn/x.h5 --split 0.5,0.5 --report s.json
expect 1 "^gen_moves: --report 'nodir/g.json': its folder 'nodir' does not exist$" \
  "$bin/gen_moves" --games 5 --out new.pgn --report nodir/g.json
expect 1 "^gen_moves: --out 'n\\\\xff.pgn' is not UTF-8 text, which --report 'g.json' \(JSON\) cannot hold" \
  "$bin/gen_moves" --games 5 --out $'n\xff.pgn' --report g.json
expect 1 "^evaluate: --report 'nodir/r.json': its folder 'nodir' does not exist$" \
  "$bin/evaluate" --model model.safetensors --data data.h5 --games 4 --gallery new-gal --fen startpos \
  --picture p.svg --report nodir/r.json --device cpu
expect 1 "^evaluate: --gallery 'readme.pgn/gal': 'readme.pgn' is not a folder$" \
  "$bin/evaluate" --model model.safetensors --games 4 --gallery readme.pgn/gal --report r.json --device cpu
expect 1 "^evaluate: the command line holds 'g\\\\xff', not UTF-8 text, which --report 'r.json' \(JSON\) cannot hold$" \
  "$bin/evaluate" --model model.safetensors --games 4 --gallery $'g\xff' --report r.json --device cpu
[[ ! -e new-gal ]] || fail "evaluate made its gallery folder in a run that failed"
# train --force keeps the replaced run in replaced/, a folder it marks as its own: a user's own
# replaced/ is never deleted, neither by --force nor when a run finishes (both once did).
cp -r run own-run && mkdir own-run/replaced && echo mine > own-run/replaced/notes.txt
expect 1 "^train: --force: 'own-run/replaced' is not a folder train made \(it has no .legalnet-replaced\)" \
  "$bin/train" -q --data data.h5 --out own-run --force --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --device cpu
mkdir -p own-new/replaced && echo mine > own-new/replaced/notes.txt
cases=$((cases + 1))
"$bin/train" -q --data data.h5 --out own-new --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --threads 1 --device cpu ||
  fail "train into a folder holding the user's replaced/ failed"
[[ $(cat own-new/replaced/notes.txt 2>&1) == mine ]] || fail "a finished train run deleted the user's own replaced/"
cases=$((cases + 1))  # and --force replaces, then deletes, only its own replaced/
"$bin/train" -q --data data.h5 --out own-new --force --arch mlp --hidden 16 --max-steps 3 --batch-size 16 \
  --threads 1 --device cpu 2>/dev/null && fail "train --force took a user's replaced/"
rm -rf own-new/replaced
"$bin/train" -q --data data.h5 --out own-new --force --arch mlp --hidden 16 --max-steps 3 --batch-size 16 \
  --threads 1 --device cpu || fail "train --force on a finished run failed"
[[ -s own-new/model.safetensors && ! -e own-new/replaced ]] || fail "train --force did not delete its own replaced/"
rm -rf own-run own-new
# The Python export: never onto the model it reads, under any name.
if [[ -n $python ]] && "$python" -c "import torch, safetensors" 2>/dev/null; then
  cp model.safetensors m.onnx && ln -s m.onnx m-link.onnx
  expect 1 "^legalnet: m.onnx: is the model being exported; name another output$" \
    env PYTHONPATH="$src/python" "$python" -m legalnet export m.onnx m.onnx
  expect 1 "^legalnet: m-link.onnx: is the model being exported; name another output$" \
    env PYTHONPATH="$src/python" "$python" -m legalnet export m.onnx m-link.onnx
  rm -f m.onnx m-link.onnx
fi

# 5c. Links planted under the names a tool chooses itself inside a folder (a shared --gallery
# or --out) are replaced, never written through; what they point to stays as it was.
echo "victim" > victim.txt && cp victim.txt victim-copy.txt
mkdir planted-gal && ln -s ../victim.txt planted-gal/most-illegal-mass.svg
cases=$((cases + 1))
"$bin/evaluate" -q --model model.safetensors --data data.h5 --games 2 --gallery planted-gal --device cpu >/dev/null ||
  fail "evaluate --gallery with a planted link failed"
cmp -s victim.txt victim-copy.txt || fail "evaluate --gallery wrote through a planted link"
[[ -f planted-gal/most-illegal-mass.svg && ! -L planted-gal/most-illegal-mass.svg ]] ||
  fail "evaluate --gallery did not replace the planted link with its picture"
mkdir planted-run
ln -s ../victim.txt planted-run/metrics.csv && ln -s ../victim-copy.txt planted-run/options.json
ln -s ../planted-model planted-run/model.safetensors
ln -s ../planted-checkpoint planted-run/checkpoint.safetensors
cases=$((cases + 1))
"$bin/train" -q --data data.h5 --out planted-run --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --threads 1 \
  --device cpu || fail "train into a folder with planted links failed"
[[ $(cat victim.txt) == victim && $(cat victim-copy.txt) == victim ]] || fail "train wrote its run files through a planted link"
[[ ! -e planted-model && ! -e planted-checkpoint ]] || fail "train wrote its model or checkpoint through a planted link"
for name in metrics.csv options.json model.safetensors checkpoint.safetensors; do
  [[ -f planted-run/$name && ! -L planted-run/$name ]] || fail "train did not replace the planted link $name"
done
# --resume appends to metrics.csv: a link planted there since is refused, not appended through.
"$bin/train" -q --data data.h5 --out planted-run --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --threads 1 \
  --device cpu --stop-at-step 1 --force 2>/dev/null
rm -f planted-run/metrics.csv && ln -s ../victim.txt planted-run/metrics.csv
ALLOW_NEW_FILES=1 expect 1 "^train: cannot append to 'planted-run/metrics.csv': a symbolic link" \
  "$bin/train" -q --data data.h5 --out planted-run --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --threads 1 \
  --device cpu --resume
# The same for TensorBoard's events file, and nothing is written through it.
rm planted-run/metrics.csv && printf 'step,epoch\n' > planted-run/metrics.csv
rm -f planted-run/events.out.tfevents.train && ln -s ../victim.txt planted-run/events.out.tfevents.train
ALLOW_NEW_FILES=1 expect 1 "^train: cannot append to 'planted-run/events.out.tfevents.train': a symbolic link" \
  "$bin/train" -q --data data.h5 --out planted-run --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --threads 1 \
  --device cpu --resume
[[ $(cat victim.txt) == victim ]] || fail "train --resume wrote through a link planted as its events file"
# replaced/ as a link: not train's folder, refused before anything moves.
mkdir victim-dir && echo keep > victim-dir/keep.txt
cp -r run link-run && ln -s ../victim-dir link-run/replaced
expect 1 "^train: --force: 'link-run/replaced' is not a folder train made" \
  "$bin/train" -q --data data.h5 --out link-run --force --arch mlp --hidden 16 --max-steps 3 --device cpu
rm -rf planted-gal planted-run link-run victim-dir victim.txt victim-copy.txt

# 5b. Faults around a training run (issue 27, class 10).
# A full disk while train checkpoints: one line naming the file, no temporary left. A small
# tmpfs of 2 MB is a full disk for a net of 2 MB (6 MB of checkpoint); mounting one needs root (or a user namespace).
mkdir small
trap 'umount "$work/small" 2>/dev/null; rm -rf "$work"' EXIT
if mount -t tmpfs -o size=2m tmpfs small 2>/dev/null; then
  ALLOW_NEW_FILES=1 expect 1 "^train: cannot write 'small/full-run/checkpoint.safetensors': No space left on device$" \
    "$bin/train" -q --data data.h5 --out small/full-run --arch mlp --hidden 256 --max-steps 3 --batch-size 16 \
    --checkpoint-every 1 --threads 1 --device cpu --precision fp32
  # A run that resumes on a full disk keeps its checkpoint and model as they were.
  rm -rf small/full-run && cp -r run small/kept-run && { head -c 4M /dev/zero > small/filler; } 2>/dev/null
  expect 1 "^train: cannot (write|create) '?small/kept-run/(options.json|metrics.csv|events.out.tfevents.train|checkpoint.safetensors)" \
    "$bin/train" -q --data data.h5 --out small/kept-run --resume --arch mlp --hidden 16 --max-steps 6 \
    --batch-size 16 --eval-every 3 --checkpoint-every 1 --threads 1 --device cpu --precision fp32
  umount small
else
  echo "skipped: a full disk needs 'mount -t tmpfs' (root); run the suite as root to test it"
fi
rmdir small

# A signal ignored when the tool starts (nohup, a shell's background job) stays ignored: the
# temporaries' cleanup handler must not make SIGINT or SIGHUP end the run.
for sig in INT HUP; do
  cases=$((cases + 1))
  (trap '' "$sig"; exec "$bin/gen_moves" -q --games 2000000 --threads 1 --out ignored.pgn) &
  pid=$!
  for _ in $(seq 20); do sleep 0.1; kill -s "$sig" "$pid" 2>/dev/null; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    wait "$pid"
  else
    wait "$pid"
    rc=$?
    ((rc == 0)) || fail "gen_moves with SIG$sig ignored: ended by the ignored signal (exit $rc)"
  fi
  [[ -z $(find . -name 'ignored.pgn*') ]] || fail "gen_moves ended by SIGTERM left $(find . -name 'ignored.pgn*')"
done

# One train at a time in a run folder: the second is refused while the first holds the
# folder's lock; a lock whose process died blocks nothing.
exec {held}<run  # this shell holds the lock, as a train running there would
flock -x "$held"
expect 1 "^train: 'run' is in use by another train \(it holds the folder's lock\); wait for it to end, or use another --out$" \
  "$bin/train" --data data.h5 --out run --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
expect 1 "^train: 'run' is in use by another train" "$bin/train" --data data.h5 --out run --force --device cpu
exec {held}<&-
cp -r run resumed
cases=$((cases + 1))
{ (flock -x 9 && kill -KILL $BASHPID) 9<resumed; } 2>/dev/null  # a process that dies holding the lock
"$bin/train" -q --data data.h5 --out resumed --resume --arch mlp --hidden 16 --max-steps 5 --batch-size 16 \
  --eval-every 3 --threads 2 --device cpu --precision fp32 || fail "train --resume after a dead lock holder failed"

# --resume continues the same run: other data or hyperparameters are refused, naming the first
# option that differs; the run's length and where it runs may change (done just above).
resume() { expect 1 "$1" "$bin/train" --data data.h5 --out run --resume --device cpu "${@:2}"; }
same=(--arch mlp --hidden 16)
resume "^train: --resume: --lr is 0.01 here but 0.002 in the run being resumed \('run/options.json'\); resume with the run's value, or start a new run$" "${same[@]}" --batch-size 16 --lr 0.01
resume "^train: --resume: --hidden is 32 here but 16 in the run being resumed" --arch mlp --hidden 32 --batch-size 16
resume "^train: --resume: --seed is 7 here but 0 in the run being resumed" "${same[@]}" --batch-size 16 --seed 7
resume "^train: --resume: --optimizer is \"sgd\" here but \"adam(w)?\" in the run being resumed" "${same[@]}" --batch-size 16 --optimizer sgd
resume "^train: --resume: --batch-size is 32 here but 16 in the run being resumed" "${same[@]}" --batch-size 32
cp data.h5 other.h5
expect 1 "^train: --resume: --data is \[\"other.h5\"\] here but \[\"data.h5\"\] in the run being resumed" \
  "$bin/train" --data other.h5 --out run --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
rm -rf resumed other.h5

# JSON inside a file names the file: a model whose 'training' metadata is not JSON, a run whose
# options.json is not.
if [[ -n $python ]] && "$python" -c "import safetensors" 2>/dev/null; then
  "$python" -c "
from safetensors import safe_open
from safetensors.numpy import load_file, save_file
with safe_open('model.safetensors', 'np') as f:
    metadata = f.metadata()
metadata['training'] = '{not json'
save_file(load_file('model.safetensors'), 'bad-training.safetensors', metadata=metadata)"
  expect 1 "^evaluate: bad-training.safetensors: metadata 'training' is not JSON \('\{not json'\)$" \
    "$bin/evaluate" --model bad-training.safetensors --fen startpos --device cpu
fi
cp -r run bad-options && printf '{"lr": 0.002,' > bad-options/options.json
expect 1 "^train: bad-options/options.json: not JSON \(" \
  "$bin/train" --data data.h5 --out bad-options --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
rm -rf bad-options

# ---- Issue 60, classes 8 and 9: numeric options at their extremes, and the environment ------
# 60.8 Every numeric option at its extremes is refused by the parser in one line naming it, before
# any work: out of its range (--threads 100000, --batch-size 10^9, --time-budget -1, nan or 1e308,
# --max-steps 2^63, a weight of 10^6), and what CLI11 would read wrongly without a word: a negative
# seed (once wrapped to 2^64-1), one beyond 2^64 (once clamped to 2^64-1), an empty value (once
# the default), "1e3" for an integer (once "not in range" for a value inside it).
expect 2 "^gen_moves: --threads: Value 100000 not in range 0 to 1024 \(see --help\)$" "$bin/gen_moves" --threads 100000 --out x.pgn
expect 2 "^gen_moves: --seed: -1 is below 0 \(see --help\)$" "$bin/gen_moves" --seed -1 --out x.pgn
expect 2 "^gen_moves: --seed: 18446744073709551616 is above 18446744073709551615 \(see --help\)$" \
  "$bin/gen_moves" --seed 18446744073709551616 --out x.pgn
expect 2 "^gen_moves: --seed: an empty value is not a number \(see --help\)$" "$bin/gen_moves" --seed "" --out x.pgn
expect 2 "^gen_moves: --games: 1e3 is not an integer \(see --help\)$" "$bin/gen_moves" --games 1e3 --out x.pgn
expect 2 "^gen_moves: --shard: an empty value is not a number \(see --help\)$" "$bin/gen_moves" --shard " " --num-shards 2 --out x.pgn
expect 2 "^gen_moves: --depth: Value 21 not in range 1 to 20 \(see --help\)$" "$bin/gen_moves" perft --depth 21
expect 2 "^gen_moves: --count: 18446744073709551616 is not a number in 0\.\.1e\+12 \(see --help\)$" \
  "$bin/gen_moves" positions --count 18446744073709551616 --out x.fen
expect 2 "^tensorize: --max-positions: -1 is not a number in 0\.\.1e\+12 \(see --help\)$" "$bin/tensorize" --in games.pgn --out t.h5 --max-positions -1
expect 2 "^tensorize: --split-seed: -1 is below 0 \(see --help\)$" "$bin/tensorize" --in games.pgn --out t.h5 --split 0.5,0.5 --split-seed -1
expect 2 "^tensorize: --threads: 1e3 is not an integer \(see --help\)$" "$bin/tensorize" --in games.pgn --out t.h5 --threads 1e3
expect 1 "^tensorize: --split fractions must be positive$" "$bin/tensorize" --in games.pgn --out t.h5 --split nan,0.5
for v in 0 1048577 1000000000; do
  expect 2 "^train: --batch-size: Value $v not in range 1 to 1048576 \(see --help\)$" "$bin/train" --data data.h5 --out r --batch-size $v
done
for v in -1 nan inf 1e308; do
  expect 2 "^train: --time-budget: $v is not a number in 0\.\.1e\+06 \(see --help\)$" "$bin/train" --data data.h5 --out r --time-budget $v
done
for v in 9223372036854775808 18446744073709551616 -1; do
  expect 2 "^train: --max-steps: $v is not a number in 0\.\.1e\+12 \(see --help\)$" "$bin/train" --data data.h5 --out r --max-steps $v
done
expect 2 "^train: --max-steps: 1e3 is not an integer \(see --help\)$" "$bin/train" --data data.h5 --out r --max-steps 1e3
expect 2 "^train: --threads: Value 100000 not in range 0 to 1024 \(see --help\)$" "$bin/train" --data data.h5 --out r --threads 100000
expect 2 "^train: --check-weight: Value 1000000 not in range 1 to 100 \(see --help\)$" "$bin/train" --data data.h5 --out r --check-weight 1000000
expect 2 "^train: --situation-weight: in_check: the weight '1000000' is not an integer in 1\.\.100 \(see --help\)$" \
  "$bin/train" --data data.h5 --out r --situation-weight in_check=1000000
expect 2 "^train: --seed: -1 is below 0 \(see --help\)$" "$bin/train" --data data.h5 --out r --seed -1
expect 2 "^train: --lr: 1e308 is not a number in 0\.\.100 \(see --help\)$" "$bin/train" --data data.h5 --out r --lr 1e308
expect 2 "^train: --max-time: inf is not a number in 0\.\.1e\+09 \(see --help\)$" "$bin/train" --data data.h5 --out r --max-time inf
expect 2 "^train: --eval-every: an empty value is not a number \(see --help\)$" "$bin/train" --data data.h5 --out r --eval-every ""
# The largest batch the range allows (2^20 rows, 20 GB of batches) is refused before a row is read
# where this machine's memory cannot hold its batches (or, on a larger one, as more than the data).
expect 1 "^train: (--batch-size 1048576: its batches take about [0-9.]+ GB \(6 of 1048576 positions at a time, inputs and 4096-wide targets as floats\), more than the [0-9.]+ GB of memory available here; take a smaller batch|the training set has [0-9]+ positions, fewer than one batch of 1048576)$" \
  "$bin/train" --data data.h5 --out r --batch-size 1048576 --device cpu
expect 2 "^evaluate: --batch-size: Value 0 not in range 1 to 65536 \(see --help\)$" "$bin/evaluate" --model model.safetensors --batch-size 0
expect 2 "^evaluate: --top-k: Value 5000 not in range 1 to 4096 \(see --help\)$" "$bin/evaluate" --model model.safetensors --fen startpos --top-k 5000
expect 2 "^evaluate: --seed: 18446744073709551616 is above 18446744073709551615 \(see --help\)$" \
  "$bin/evaluate" --model model.safetensors --seed 18446744073709551616
expect 2 "^evaluate: --threshold: nan is not a number in 0\.\.1 \(see --help\)$" "$bin/evaluate" --model model.safetensors --threshold nan
expect 2 "^evaluate: --search-budget: Value 1000000000 not in range 1 to 1000000 \(see --help\)$" \
  "$bin/evaluate" --model model.safetensors --search-budget 1000000000
expect 2 "^evaluate: --threads: Value 100000 not in range 0 to 1024 \(see --help\)$" "$bin/evaluate" --model model.safetensors --threads 100000
# Accepted forms work as their numbers: hexadecimal, leading spaces.
expect 0 "^$" "$bin/gen_moves" -q --games 0x2 --seed " 5" --out x.pgn
[[ $(grep -c '^\[Event ' x.pgn) == 2 ]] || fail "gen_moves --games 0x2 did not write 2 games"
rm -f x.pgn

# 60.9 The environment: HOME unset or not writable, TMPDIR missing: the tools, the package, the
# Python environment's name and make's help work as usual (none of them writes there).
mkdir ro-home && chmod 555 ro-home
# shellcheck disable=SC2086 # $e is one or two words for env
for e in "-u HOME" "HOME=$work/ro-home" "HOME=/nonexistent" "TMPDIR=/nonexistent"; do
  expect 0 "^$" env $e "$bin/gen_moves" -q --games 2 --out env.pgn
  expect 0 "^$" env $e "$bin/tensorize" -q --in env.pgn --out env.h5
  expect 0 "^$" env $e "$bin/train" -q --data env.h5 --out env-run --arch mlp --hidden 8 --max-steps 2 --batch-size 8 \
    --device cpu --threads 1 --force
  expect 0 "^$" env $e "$bin/evaluate" -q --model env-run/model.safetensors --data env.h5 --fen startpos --device cpu \
    --threads 1 --report env.json
  expect 0 "^$" env $e "$src/scripts/python-env"
  expect 0 "^$" env $e make -s --no-print-directory -C "$src" -f Makefile.pipeline help
  if [[ -n $python ]]; then
    expect 0 "^$" env $e PYTHONPATH="$src/python" "$python" -m legalnet score env-run/model.safetensors startpos 2
  fi
  [[ $e == TMPDIR* && -n $python ]] && expect 0 "^$" env HOME="$work/ro-home" $e PYTHONPATH="$src/python" "$python" \
    -m legalnet export env-run/model.safetensors env.onnx
  rm -rf env.pgn env.h5 env-run env.json env.onnx
done
rmdir ro-home
# Names with a newline or a byte that is not UTF-8 are names like others (their files are made),
# quoted escaped; where JSON must hold one (train's options.json, a --report), it is refused in one
# line naming the option.
expect 0 "^$" "$bin/gen_moves" -q --games 2 --out $'n\nl.pgn'
expect 0 "^$" "$bin/tensorize" -q --in $'n\nl.pgn' --out $'n\nl.h5'
expect 0 "^$" "$bin/tensorize" -q --in $'n\nl.pgn' --out $'n\xffl.h5'
expect 0 "^$" "$bin/train" -q --data $'n\nl.h5' --out $'n\nl-run' --arch mlp --hidden 8 --max-steps 2 --batch-size 8 \
  --device cpu --threads 1
expect 0 "^$" "$bin/evaluate" -q --model $'n\nl-run/model.safetensors' --data $'n\xffl.h5' --device cpu --threads 1
expect 0 "^$" "$bin/evaluate" -q --model $'n\nl-run/model.safetensors' --data $'n\nl.h5' --device cpu --threads 1 \
  --report $'n\nl.json'
expect 1 "^train: --out 'r\\\\xff' is not UTF-8 text, which the run's options.json 'r\\\\xff/options.json' \(JSON\) cannot hold; rename it$" \
  "$bin/train" --data data.h5 --out $'r\xff'
expect 1 "^train: --data 'n\\\\xffl\.h5' is not UTF-8 text, which the run's options.json 'r/options.json' \(JSON\) cannot hold; rename it$" \
  "$bin/train" --data $'n\xffl.h5' --out r
expect 1 "^train: --report 'r\\\\xff\.json' is not UTF-8 text, which --report 'r\\\\xff\.json' \(JSON\) cannot hold; rename it$" \
  "$bin/train" --data data.h5 --out r --report $'r\xff.json'
expect 1 "^evaluate: the command line holds 'n\\\\xffl\.h5', not UTF-8 text, which --report 'e\.json' \(JSON\) cannot hold$" \
  "$bin/evaluate" --model model.safetensors --data $'n\xffl.h5' --report e.json
expect 1 "^evaluate: n\\\\x0al\\\\xff: cannot read: No such file or directory$" "$bin/evaluate" --model $'n\nl\xff' --fen startpos
# A folder named like an option is a folder: the value after --out is the option's, whatever it says.
mkdir -- --force
expect 0 "^$" "$bin/gen_moves" -q --games 2 --out --force/g.pgn
expect 0 "^$" "$bin/train" -q --data $'n\nl.h5' --out --force --arch mlp --hidden 8 --max-steps 2 --batch-size 8 \
  --device cpu --threads 1
[[ -f --force/model.safetensors && -f --force/g.pgn ]] || fail "no run or games in the folder named --force: $(ls -- --force)"
rm -rf -- --force $'n\nl.pgn' $'n\nl.h5' $'n\xffl.h5' $'n\nl-run' $'n\nl.json'
# The Python environment's folder is one line for $(...), CMake and make: a newline is refused.
expect 1 "^python-env: the environment's folder would be '/tmp/a\\\\nb/legalnet/venv-torch.*', a name with a newline \(from XDG_DATA_HOME\); set LEGALNET_VENV to another$" \
  env XDG_DATA_HOME=$'/tmp/a\nb' "$src/scripts/python-env"
# make's names: white space, a newline, a quote or a character the shell reads is refused in one
# line (make splits names at spaces; the rules pass them unquoted).
for v in "DATA=a b" $'DATA=a\nb' "RUN=x;y" "BUILD=a'b" $'RECIPE=r\nx.toml'; do
  expect 2 "^Makefile\.pipeline:[0-9]+: \*\*\* ${v%%=*}='.*': a name with white space or one of .* name another\.  Stop\.$" \
    make -s --no-print-directory -C "$src" -f Makefile.pipeline help "$v"
done
if [[ -n $python ]]; then
  # The package's command: a name with a newline is quoted whole, escaped; TOP is a count.
  pkg=(env PYTHONPATH="$src/python" "$python" -m legalnet)
  expect 1 "^legalnet: n\\\\x0al\\\\xff\.safetensors: cannot read: No such file or directory$" "${pkg[@]}" score $'n\nl\xff.safetensors' startpos
  expect 1 "^legalnet: FEN '\\\\xff\\\\x0a': 1 fields, expected 6 \(or 4 without counters\)$" "${pkg[@]}" score model.safetensors $'\xff\n'
  expect 1 "^legalnet: x\.\\\\xff: unknown export format '\.\\\\xff' \(expected \.onnx, \.pt2, \.ts\)$" "${pkg[@]}" export model.safetensors $'x.\xff'
  for v in -1 1e308 ""; do
    expect 1 "^legalnet: score: TOP '$v' is not a count of moves \(1 or more\)$" "${pkg[@]}" score model.safetensors startpos "$v"
  done
fi
# ---- end of issue 60, classes 8 and 9 ---------------------------------------------------------

fi  # part 1
if [[ $part != 1 ]]; then

# ---- Issue 35, classes 2, 3, 8 and 9: parsers of files from others --------------------------
# 35.2 Recursion driven by a file: JSON nested deeper than 64 levels in a model's, a checkpoint's
# or a run's metadata, or in report.json, is refused by one bounded reader before any parser
# builds it (a few hundred KB of brackets once overflowed the stack or ended in a
# RecursionError); a value quoted back in a message is cut short.
if [[ -n $python ]] && "$python" -c "import safetensors, torch" 2>/dev/null; then
  cp -r run deep-run
  "$python" - <<'PY'
import json, struct
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

def forge(source, name, tensors=None, **metadata):
    with safe_open(source, "np") as f:
        meta = f.metadata()
    meta.update(metadata)
    if tensors is not None:  # other tensors: the checksum would refuse them before the check under test
        meta.pop("legalnet_data_crc32", None)
    save_file(tensors or load_file(source), name, metadata=meta)

deep_array = "[" * 100000 + "]" * 100000
forge("model.safetensors", "deep-training.safetensors", training='{"a":' * 100000 + "1" + "}" * 100000)
forge("model.safetensors", "deep-config.safetensors", config=deep_array[99000:101000])
forge("deep-run/checkpoint.safetensors", "deep-run/checkpoint.safetensors", config="[" * 70 + "]" * 70)
# A tensor entry of the header itself nested deep (the safetensors writer would not write it).
with open("model.safetensors", "rb") as f:
    data = f.read()
n = struct.unpack("<Q", data[:8])[0]
text = data[8:8 + n].rstrip(b" ")[:-1] + b',"deep":' + deep_array.encode() + b"}"
with open("deep-header.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data[8 + n:])
# A run whose options.json is nested deep, and one whose --lr is a long list.
options = json.load(open("run/options.json"))
open("deep-run/options.json", "w").write(json.dumps(options)[:-1] + ',"x":' + deep_array + "}")
options["lr"] = list(range(100000))
json.dump(options, open("long-lr-options.json", "w"))
PY
  expect 1 "^evaluate: deep-training.safetensors: metadata 'training' is JSON nested deeper than 64 levels \(at byte 320\)$" \
    "$bin/evaluate" --model deep-training.safetensors --fen startpos --device cpu
  expect 1 "^evaluate: deep-config.safetensors: bad model description: JSON nested deeper than 64 levels \(at byte 64\)$" \
    "$bin/evaluate" --model deep-config.safetensors --fen startpos --device cpu
  expect 1 "^evaluate: deep-header.safetensors: safetensors header is JSON nested deeper than 64 levels \(at byte [0-9]+\)$" \
    "$bin/evaluate" --model deep-header.safetensors --fen startpos --device cpu
  expect 1 "^train: deep-run/options.json: JSON nested deeper than 64 levels \(at byte [0-9]+\)$" \
    "$bin/train" --data data.h5 --out deep-run --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
  cp run/options.json deep-run/options.json
  expect 1 "^train: deep-run/checkpoint.safetensors: bad model description: JSON nested deeper than 64 levels \(at byte 64\)$" \
    "$bin/train" --data data.h5 --out deep-run --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
  cp long-lr-options.json deep-run/options.json
  expect 1 "^train: --resume: --lr is 0.002 here but \[0,1,2,3,[0-9,]{150,200}\.\.\. in the run being resumed" \
    "$bin/train" --data data.h5 --out deep-run --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
  expect 1 "^legalnet: deep-training.safetensors: metadata 'training' is JSON nested deeper than 64 levels \(at byte 320\)$" \
    env PYTHONPATH="$src/python" "$python" -m legalnet score deep-training.safetensors startpos
  mkdir deep-report && printf '{"model": %s1%s}' "$(printf '[%.0s' {1..100000})" "$(printf ']%.0s' {1..100000})" \
    > deep-report/report.json
  expect 1 "^report-html: deep-report: deep-report/report.json: not JSON of a report \(nested deeper than 64 levels at byte 73\)$" \
    "$python" "$src/scripts/report-html" deep-report
  head -c 17000000 /dev/zero | tr '\0' ' ' > deep-report/report.json
  expect 1 "^report-html: deep-report: deep-report/report.json: larger than 16777216 bytes; not a report of evaluate$" \
    "$python" "$src/scripts/report-html" deep-report
  rm -rf deep-run deep-report long-lr-options.json

  # 35.3 Numbers a file claims: NaN or infinite weights are refused by evaluate and by Python
  # (they once made evaluate --games play a null move); a checkpoint's step is held to the run.
  "$python" - <<'PY'
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file
def forge(source, name, value=None, **metadata):
    with safe_open(source, "np") as f:
        meta = f.metadata()
    tensors = load_file(source)
    if value is not None:
        key = sorted(k for k, t in tensors.items() if t.dtype == np.float32 and t.size > 3)[0]
        tensors[key] = tensors[key].copy()
        tensors[key].flat[3] = value
        meta.pop("legalnet_data_crc32", None)  # a forger's file: the checks behind the checksum are under test
    meta.update(metadata)
    save_file(tensors, name, metadata=meta)
forge("model.safetensors", "nan.safetensors", np.nan)
forge("model.safetensors", "inf.safetensors", -np.inf)
forge("run/checkpoint.safetensors", "nan-checkpoint.safetensors", np.nan)
forge("run/checkpoint.safetensors", "step-huge.safetensors", step=str(2**62))
forge("run/checkpoint.safetensors", "step-past.safetensors", step="1000")
PY
  expect 1 "^evaluate: nan.safetensors: tensor '[a-z_.0-9]+' holds a NaN or infinite value$" \
    "$bin/evaluate" --model nan.safetensors --games 4 --device cpu
  expect 1 "^evaluate: inf.safetensors: tensor '[a-z_.0-9]+' holds a NaN or infinite value$" \
    "$bin/evaluate" --model inf.safetensors --games 4 --device cpu
  expect 1 "^legalnet: nan.safetensors: tensor '[a-z_.0-9]+' holds a NaN or infinite value$" \
    env PYTHONPATH="$src/python" "$python" -m legalnet score nan.safetensors startpos
  for name in nan-checkpoint step-huge step-past; do
    cp -r run "resume-$name" && cp "$name.safetensors" "resume-$name/checkpoint.safetensors"
  done
  expect 1 "^train: resume-nan-checkpoint/checkpoint.safetensors: tensor 'model\.[a-z_.0-9]+' holds a NaN or infinite value$" \
    "$bin/train" --data data.h5 --out resume-nan-checkpoint --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
  expect 1 "^train: resume-step-huge/checkpoint.safetensors: metadata 'step' is 4611686018427387904, more than any run takes \(at most 1099511627776\)$" \
    "$bin/train" --data data.h5 --out resume-step-huge --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
  expect 1 "^train: --resume: 'resume-step-past/checkpoint.safetensors' is at step 1000, past the 3 steps of this run \(--epochs, --max-steps, --replan\)$" \
    "$bin/train" --data data.h5 --out resume-step-past --resume --arch mlp --hidden 16 --batch-size 16 --max-steps 3 \
    --device cpu
  rm -rf resume-nan-checkpoint resume-step-huge resume-step-past nan-checkpoint.safetensors step-*.safetensors
  # convert of an earlier model.pt: a stride-0 view naming 4 GB of one stored float, and a module
  # tree shared 2^40 ways through the pickle's memo, refused at once.
  "$python" - <<'PY'
import struct, zipfile
def text(s):
    return b"X" + struct.pack("<I", len(s)) + s.encode()
def module(items):
    return b"c__torch__\nModule\n)\x81}(" + b"".join(text(k) + v for k, v in items) + b"ub"
def archive(name, ops, storages=()):
    with zipfile.ZipFile(name, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", b"\x80\x02" + ops + b".")
        for key, data in storages:
            z.writestr(f"archive/data/{key}", data)
storage = b"(" + text("storage") + b"ctorch\nFloatStorage\n" + text("0") + text("cpu") + b"K\x01tQ"
view = (b"ctorch._utils\n_rebuild_tensor_v2\n(" + storage + b"K\x00J\x00\x00\x10\x00J\x00\x04\x00\x00\x86K\x00K\x00\x86"
        b"\x89ccollections\nOrderedDict\n)RtR")
archive("stride0.pt", module([("weight", view)]), [("0", b"\0" * 4)])
ops = module([]) + b"q\x00"
for level in range(1, 41):
    ops += b"0" + module([("a", b"h" + bytes([level - 1])), ("b", b"h" + bytes([level - 1]))]) + b"q" + bytes([level])
archive("shared.pt", ops)
PY
  expect 1 "^legalnet: stride0.pt: not a model.pt of legalnet \(UnpicklingError: a tensor of 1073741824 elements views a storage of 1\)$" \
    timeout 120 env PYTHONPATH="$src/python" "$python" -m legalnet convert stride0.pt never.safetensors
  expect 1 "^legalnet: shared.pt: not a model.pt of legalnet \(module '[ab.]+' appears more than once in the tree\)$" \
    timeout 120 env PYTHONPATH="$src/python" "$python" -m legalnet convert shared.pt never.safetensors
  rm -f nan.safetensors inf.safetensors stride0.pt shared.pt deep-*.safetensors
else
  echo "skipped: issue 35's forged model files need a Python with safetensors and torch"
fi

# 35.8 One long line costs its game, not the file: a game with a comment of 17 MiB between two
# games is skipped with a warning (as other bad games are), and the other two are read, in
# bounded memory. --strict still stops at it.
{
  printf '[Event "first"]\n\n1. e4 e5 2. Nf3 *\n\n[Event "long"]\n\n1. d4 {'
  head -c 17825792 /dev/zero | tr '\0' 'c'
  printf '} d5 *\n\n[Event "third"]\n\n1. c4 c5 *\n'
} | zstd -q -o long-comment.pgn.zst
expect 0 "^tensorize: skipped long-comment.pgn.zst: game 2 \(line 5\): line 7: a line longer than 16 MiB$" \
  bash -c "ulimit -v 1000000; exec '$bin/tensorize' -q --in long-comment.pgn.zst --out long-comment.h5 --report long-comment.json"
cases=$((cases + 1))
if [[ -n $python ]] && ! [[ $("$python" -c "import json; s = json.load(open('long-comment.json')); print(s['games_kept'], s['games_skipped'], s['positions'])" 2>&1) == "2 1 5" ]]; then
  fail "tensorize on long-comment.pgn.zst did not keep the other two games: $(cat long-comment.json)"
fi
expect 1 "^tensorize: long-comment.pgn.zst: game 2 \(line 5\): line 7: a line longer than 16 MiB$" \
  "$bin/tensorize" --strict --in long-comment.pgn.zst --out never.h5
rm -f long-comment.pgn.zst long-comment.h5 long-comment.json

# 35.9 C++ and Python read one model file alike (tests/testdata/model_configs.json holds the
# shared verdicts): a fractional or 2^32+64 size, a boolean blocks, a mixing the net does not
# have are refused by both. Python's messages are escaped as the C++ tools' are; its outputs
# take the user's umask; every failure of export, convert and report-html is one line.
if [[ -n $python ]] && "$python" -c "import safetensors, torch" 2>/dev/null; then
  "$python" - <<'PY'
import json
from safetensors import safe_open
from safetensors.numpy import load_file, save_file
with safe_open("model.safetensors", "np") as f:
    meta = f.metadata()
for name, change in (("fractional", {"hidden": 16.5}), ("wide", {"hidden": 2**32 + 16}),
                     ("bool-blocks", {"kind": "resnet", "blocks": True, "channels": 8}), ("mixing", {"mixing": "lines"})):
    config = dict(json.loads(meta["config"]), **change)
    save_file(load_file("model.safetensors"), f"config-{name}.safetensors", metadata=dict(meta, config=json.dumps(config)))
PY
  for case in "fractional:the config's 'hidden' is not an integer" \
              "wide:the config's 'hidden' is 4294967312, not in 0..65536" \
              "bool-blocks:the config's 'blocks' is not an integer" \
              "mixing:mixing 'lines' is a resnet option, not mlp's"; do
    name=${case%%:*} message=${case#*:}
    expect 1 "^evaluate: config-$name.safetensors: (bad model description: )?$message$" \
      "$bin/evaluate" --model "config-$name.safetensors" --fen startpos --device cpu
    expect 1 "^legalnet: config-$name.safetensors: config: .*(not an integer|not in 0\.\.65536|resnet option)" \
      env PYTHONPATH="$src/python" "$python" -m legalnet score "config-$name.safetensors" startpos
  done
  rm -f config-*.safetensors
  esc_name=$'m\e]0;owned\a.safetensors'
  expect 1 '^legalnet: m\\x1b\]0;owned\\x07.safetensors: cannot read: No such file or directory$' \
    env PYTHONPATH="$src/python" "$python" -m legalnet score "$esc_name" startpos
  cases=$((cases + 1))  # an export takes the umask, as the C++ tools' outputs do (not mkstemp's 0600)
  (umask 022 && PYTHONPATH="$src/python" "$python" -m legalnet export model.safetensors umask.pt2 >/dev/null 2>&1)
  [[ $(stat -c %a umask.pt2 2>&1) == 644 ]] || fail "export under umask 022 wrote mode $(stat -c %a umask.pt2 2>&1)"
  rm -f umask.pt2
  # SIGINT: one line, status 130, no temporary, no trace.
  cases=$((cases + 1))
  PYTHONPATH="$src/python" "$python" -m legalnet export model.safetensors interrupted.pt2 >/dev/null 2>sigint.log &
  pid=$!
  sleep 3
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  if ((rc != 0)) && { ((rc != 130)) || [[ $(cat sigint.log) != "legalnet: interrupted" ]]; }; then
    fail "export interrupted: exit $rc: $(head -3 sigint.log)"
  fi
  rm -f sigint.log interrupted.pt2
  # report-html: a string with a lone surrogate is written, a full disk and a read-only folder
  # are one line each.
  mkdir html && "$bin/evaluate" -q --model model.safetensors --games 2 --report html/report.json --device cpu
  "$python" -c "
import json; r = json.load(open('html/report.json')); r['model']['description'] = 'x\udc80'
open('html/report.json', 'w').write(json.dumps(r))"
  expect 0 "^$" "$python" "$src/scripts/report-html" html
  cases=$((cases + 1))
  LC_ALL=C grep -q $'x\xef\xbf\xbd' html/report.html || fail "report-html did not write the lone surrogate as U+FFFD"
  rm -f html/report.html
  mkdir small35
  if mount -t tmpfs -o size=64k tmpfs small35 2>/dev/null; then
    cp html/report.json small35/ && { head -c 200k /dev/zero > small35/filler; } 2>/dev/null
    expect 1 "^report-html: small35: \[Errno 28\] No space left on device" "$python" "$src/scripts/report-html" small35
    expect 1 "^legalnet: .*small35/full.pt2.*: No space left on device$|^legalnet: .*No space left on device" \
      env PYTHONPATH="$src/python" "$python" -m legalnet export model.safetensors small35/full.pt2
    rm -f small35/filler && mount -o remount,ro small35
    expect 1 "^report-html: cannot create .small35/report.html.tmp.[0-9.]*.: Read-only file system$" "$python" "$src/scripts/report-html" small35
    expect 1 "^legalnet: .*small35.*: Read-only file system$" \
      env PYTHONPATH="$src/python" "$python" -m legalnet export model.safetensors small35/ro.pt2
    umount small35
  else
    echo "skipped: a full disk and a read-only folder need 'mount -t tmpfs' (root)"
  fi
  rmdir small35
  rm -rf html
fi
# ---- end of issue 35, classes 2, 3, 8 and 9 ---------------------------------------------------

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
expect 2 "^evaluate: --threshold: 1\.5 is not a number in 0\.\.1" "$bin/evaluate" --model model.safetensors --threshold 1.5
expect 2 "^evaluate: --games: Value 2000000000 not in range" "$bin/evaluate" --model model.safetensors --games 2000000000
expect 2 "^evaluate: --opponent: stockfish not in" "$bin/evaluate" --model model.safetensors --games 1 --opponent stockfish
expect 2 "^tensorize: --threads: Value -1 not in range" "$bin/tensorize" --in games.pgn --out t.h5 --threads -1

# --config: a key that names no option is an error naming the key and the file.
printf 'lr = 0.01\nlearning-rate = 0.1\n' > typo.ini
expect 2 "^train: --config 'typo.ini': unknown key 'learning-rate' \(no such option\) \(see --help\)$" \
  "$bin/train" --config typo.ini --data data.h5 --out never-run --max-steps 1 --device cpu
printf '[section]\nlr = 0.01\n' > section.ini
expect 2 "^train: --config 'section.ini': unknown key '\[section\]' \(no such option\) \(see --help\)$" \
  "$bin/train" --config section.ini --data data.h5 --out never-run --max-steps 1 --device cpu

# 7. Messages that say what is wrong, in the user's words.
expect 1 "^evaluate: --data: empty.h5 holds no positions to measure$" "$bin/evaluate" --model model.safetensors --data empty.h5
expect 1 "^gen_moves: FEN field 3: castling letter 'H' is Chess960's" \
  "$bin/gen_moves" perft --fen "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1" --depth 1
expect 1 "^evaluate: --uci answers on stdin and stdout; it takes no --games, --fen$" \
  "$bin/evaluate" --uci --model model.safetensors --games 3 --fen startpos
expect 1 "^evaluate: --seed 4294967296 is above 2147483647, the largest value of the UCI option Seed$" \
  "$bin/evaluate" --uci --model model.safetensors --seed 4294967296

# ---------------------------------------------------------------------------------------------
# Issue 35, classes 1, 4, 5, 6 and 7: planted links at temporaries, run-folder files, HDF5 links
# and virtual sources, data loss, resume by data. (Every case under expect's time limit.)

# 35.1 Writes through a planted link. Someone who can write in the output's folder plants
# links under every temporary name a tool started in the next moments could choose
# (TARGET.tmp.<pid>.<n>): each temporary is created new (O_EXCL | O_NOFOLLOW) and a name taken
# first is skipped, so the tool succeeds and what the links point to stays as it was.
plant() {  # plant TARGET VICTIM
  perl -e 'for my $p ($$ .. $$ + 3000) { for my $n (0 .. 2) { symlink($ARGV[1], "$ARGV[0].tmp.$p.$n") or die "$!" } }' \
    "$1" "$2"
}
unplant() { find "$(dirname "$1")" -maxdepth 1 -name "$(basename "$1").tmp.*" -type l -delete; }
# planted_run TARGET... -- CMD...: runs CMD with links planted for every TARGET; it must succeed,
# leave the victim as it was and write each TARGET as a regular file.
planted_run() {
  local targets=() target
  while [[ $1 != -- ]]; do targets+=("$1"); shift; done
  shift
  cases=$((cases + 1))
  printf 'victim\n' > p-victim.txt
  for target in "${targets[@]}"; do plant "$target" "$work/p-victim.txt"; done
  if ! err=$(timeout -k 5 120 "$@" 2>&1 >/dev/null </dev/null); then
    fail "$* with links planted at its temporaries: $err"
  fi
  [[ $(cat p-victim.txt) == victim ]] || fail "$*: wrote through a link planted at a temporary's name"
  for target in "${targets[@]}"; do
    [[ -f $target && ! -L $target ]] || fail "$*: did not write $target"
    unplant "$target"
  done
  rm -f p-victim.txt
}
hdf5_magic() { [[ $(head -c 4 -- "$1" | od -An -c | tr -d ' ') == '211HDF' ]]; }
planted_run p-data.h5 -- "$bin/tensorize" -q --in games.pgn --out p-data.h5
hdf5_magic p-data.h5 || fail "tensorize with planted links wrote no HDF5 file"
planted_run p-split.train.h5 p-split.val.h5 -- "$bin/tensorize" -q --in games.pgn --out p-split.h5 --split 0.5,0.5
cp p-data.h5 p-shard.h5
planted_run p-joined.h5 -- "$bin/tensorize" -q merge --out p-joined.h5 p-data.h5 p-shard.h5
planted_run p-copied.h5 -- "$bin/tensorize" -q merge --copy --out p-copied.h5 p-data.h5 p-shard.h5
planted_run p-board.png -- "$bin/evaluate" -q --model model.safetensors --fen startpos --picture p-board.png --device cpu
[[ $(head -c 4 p-board.png | od -An -c | tr -d ' ') == 211PNG ]] || fail "evaluate --picture with planted links wrote no PNG"
[[ ! -e p-board.png.svg ]] || fail "evaluate --picture left its SVG beside the picture"
if [[ -n $python ]]; then
  mkdir p-report
  "$bin/evaluate" -q --model model.safetensors --data data.h5 --games 2 --gallery p-report --report p-report/report.json \
    --device cpu >/dev/null 2>&1
  planted_run p-report/report.html -- "$python" "$src/scripts/report-html" p-report
  rm -rf p-report
fi
rm -f p-data.h5 p-split.train.h5 p-split.val.h5 p-shard.h5 p-joined.h5 p-copied.h5 p-board.png

# 35.4 Run-folder files read by the run-file rules: a regular file, not through a link, opened
# without waiting, within a size cap. (A link to /dev/zero once grew train for ever, a FIFO
# made it wait for ever.)
runfile() {  # runfile NAME SETUP REGEX: a copy of the run whose NAME SETUP made, resumed
  rm -rf rf && cp -r run rf && rm -f "rf/$1" && (cd rf && eval "$2")
  expect 1 "$3" "$bin/train" --data data.h5 --out rf --resume --arch mlp --hidden 16 --batch-size 16 --max-steps 4 \
    --threads 1 --device cpu
}
runfile options.json "ln -s /dev/zero options.json" \
  "^train: --resume: cannot read 'rf/options.json': a symbolic link \(a run's files are never read through one\); the run's options cannot be compared$"
runfile options.json "mkfifo options.json" \
  "^train: --resume: cannot read 'rf/options.json': not a regular file"
runfile options.json "cp ../run/options.json real.json && ln -s real.json options.json" \
  "^train: --resume: cannot read 'rf/options.json': a symbolic link"
runfile options.json "printf '%2000000s' '' > options.json" \
  "^train: --resume: cannot read 'rf/options.json': 2000000 bytes, more than such a file can hold \(1048576\)"
runfile checkpoint.safetensors "ln -s /dev/zero checkpoint.safetensors" \
  "^train: rf/checkpoint.safetensors: cannot read: a symbolic link \(a run's files are never read through one\)$"
runfile checkpoint.safetensors "cp ../run/checkpoint.safetensors real.safetensors && ln -s real.safetensors checkpoint.safetensors" \
  "^train: rf/checkpoint.safetensors: cannot read: a symbolic link"
runfile checkpoint.safetensors "mkfifo checkpoint.safetensors" "^train: rf/checkpoint.safetensors: not a regular file$"
ALLOW_NEW_FILES=1 runfile metrics.csv "mkfifo metrics.csv" "^train: cannot append to 'rf/metrics.csv': "
rm -rf rf

# 35.5 HDF5 by other doors: a column or group that is a soft or external link (HDF5 would
# read another name, or another file: a FIFO waits for ever), and virtual sources named by an
# absolute path or with a folder (the shards come only from the file's own folder). C++ and
# Python refuse the same files.
if [[ -n $python ]] && "$python" -c "import h5py" 2>/dev/null; then
  mkfifo l-fifo.h5 && mkdir -p l-sub && cp data.h5 l-sub/data.h5
  "$python" - "$work" <<'PY'
import shutil, sys, h5py
work = sys.argv[1]
def forge(name, change):
    shutil.copy("data.h5", name)
    with h5py.File(name, "r+") as f:
        change(f)
def link(path, make):
    def change(f):
        del f[path]
        f[path] = make
    return change
def virtual(column, file_name):
    def change(f):
        dtype, shape = f[column].dtype, f[column].shape
        layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
        layout[...] = h5py.VirtualSource(file_name, column, shape=shape)
        del f[column]
        f.create_virtual_dataset(column, layout)
    return change
forge("l-external.h5", link("castling", h5py.ExternalLink("data.h5", "/castling")))
forge("l-external-fifo.h5", link("positions", h5py.ExternalLink("l-fifo.h5", "/positions")))
forge("l-soft.h5", link("castling", h5py.SoftLink("/en_passant")))
forge("l-games.h5", link("games", h5py.ExternalLink("data.h5", "/games")))
forge("l-game-soft.h5", link("games/plies", h5py.SoftLink("/games/num_rows")))
forge("l-vds-absolute.h5", virtual("castling", work + "/data.h5"))
forge("l-vds-parent.h5", virtual("castling", "../data.h5"))
forge("l-vds-sub.h5", virtual("castling", "l-sub/data.h5"))
PY
  cp l-vds-parent.h5 l-sub/l-vds-parent.h5 && rm l-vds-parent.h5
  readers l-external.h5 "dataset 'castling' is an external link \(into another file\); only the file's own datasets are read$"
  readers l-external-fifo.h5 "dataset 'positions' is an external link \(into another file\); only the file's own datasets are read$"
  readers l-soft.h5 "dataset 'castling' is a soft link \(to another name\); only the file's own datasets are read$"
  readers l-games.h5 "group 'games' is an external link \(into another file\); only the file's own datasets are read$"
  readers l-game-soft.h5 "dataset 'games/plies' is a soft link \(to another name\); only the file's own datasets are read$"
  readers l-vds-absolute.h5 "dataset 'castling' is joined from '.*/data.h5', which is not beside it \(merge joins only shards in the file's own folder\)$"
  readers l-sub/l-vds-parent.h5 "dataset 'castling' is joined from '../data.h5', which is not beside it"
  readers l-vds-sub.h5 "dataset 'castling' is joined from 'l-sub/data.h5', which is not beside it"
  # merge joins only shards beside its output (what it writes, the readers take); --copy takes any.
  expect 1 "^tensorize: l-sub/data.h5: a shard outside the folder of --out cannot be joined virtually" \
    "$bin/tensorize" merge --out never.h5 data.h5 l-sub/data.h5
  cases=$((cases + 1))
  "$bin/tensorize" -q merge --copy --out l-copied.h5 data.h5 l-sub/data.h5 || fail "merge --copy of a shard in another folder failed"
  cases=$((cases + 1))
  cp l-sub/data.h5 l-sub/other.h5
  "$bin/tensorize" -q merge --out l-sub/l-joined.h5 l-sub/data.h5 l-sub/other.h5 || fail "merge of shards beside its output failed"
  expect 0 "" "$bin/evaluate" --model model.safetensors --data l-sub/l-joined.h5 --games 0 --device cpu -q
  # Python's readers: the same verdicts.
  pyread() {
    expect 1 "$2" env PYTHONPATH="$src/python" "$python" -c "
import sys, legalnet
try:
    legalnet.Dataset(sys.argv[1])
except ValueError as error:
    sys.exit(f'legalnet: {error}')" "$1"
  }
  pyread l-external.h5 "^legalnet: l-external.h5: dataset 'castling' is an external link \(into another file\); only the file's own datasets are read$"
  pyread l-external-fifo.h5 "^legalnet: l-external-fifo.h5: dataset 'positions' is an external link"
  pyread l-soft.h5 "^legalnet: l-soft.h5: dataset 'castling' is a soft link \(to another name\)"
  pyread l-vds-absolute.h5 "^legalnet: l-vds-absolute.h5: dataset 'castling' is joined from '.*/data.h5', which is not beside it"
  pyread l-sub/l-vds-parent.h5 "^legalnet: l-sub/l-vds-parent.h5: dataset 'castling' is joined from '../data.h5', which is not beside it"
  pyread l-vds-sub.h5 "^legalnet: l-vds-sub.h5: dataset 'castling' is joined from 'l-sub/data.h5', which is not beside it"
  rm -rf l-sub l-fifo.h5 l-*.h5
else
  echo "skipped: HDF5 links need a Python with h5py"
fi

# 35.6 Data loss. A gallery's pictures replace what lies under their names: an input there
# (or reached through a link) is refused before the run; a link planted there is replaced, and
# what it points to, an input included, stays as it was.
mkdir g-gal && cp data.h5 g-gal/most-illegal-mass.svg && cp model.safetensors g-gal/illegal-picks-blocked.svg
ln -s g-gal/most-illegal-mass.svg g-data-link.h5
expect 1 "^evaluate: --gallery 'g-gal/most-illegal-mass.svg' is also an input of this run \(--data 'g-gal/most-illegal-mass.svg'\)" \
  "$bin/evaluate" --model model.safetensors --data g-gal/most-illegal-mass.svg --games 2 --gallery g-gal --device cpu
expect 1 "^evaluate: --gallery 'g-gal/most-illegal-mass.svg' is also an input of this run \(--data 'g-data-link.h5'\)" \
  "$bin/evaluate" --model model.safetensors --data g-data-link.h5 --games 2 --gallery g-gal --device cpu
expect 1 "^evaluate: --gallery 'g-gal/illegal-picks-blocked.svg' is also an input of this run \(--model 'g-gal/illegal-picks-blocked.svg'\)" \
  "$bin/evaluate" --model g-gal/illegal-picks-blocked.svg --games 2 --gallery g-gal --device cpu
rm -rf g-gal g-data-link.h5
mkdir g-gal2 && cp data.h5 g-kept.h5 && ln -s ../g-kept.h5 g-gal2/most-illegal-mass.svg
cases=$((cases + 1))
"$bin/evaluate" -q --model model.safetensors --data g-kept.h5 --games 2 --gallery g-gal2 --device cpu >/dev/null ||
  fail "evaluate --gallery with a link to its input planted there failed"
cmp -s g-kept.h5 data.h5 || fail "evaluate --gallery wrote a picture through a link onto its input"
rm -rf g-gal2 g-kept.h5
# Halfmove clocks beyond 16 bits are kept exactly (as python-chess keeps them), in a FEN tag and
# in the dataset's column; a clock beyond what a FEN field holds (6 digits) is one line.
cases=$((cases + 1))
clock_fen="4k3/8/8/8/8/8/8/R3K3 w - - 70000 300"
"$bin/gen_moves" -q --games 1 --seed 1 --start-fen "$clock_fen" --out h-clock.pgn
grep -q "^\[FEN \"$clock_fen\"\]" h-clock.pgn || fail "gen_moves did not keep a halfmove clock of 70000: $(grep FEN h-clock.pgn)"
if [[ -n $python ]] && "$python" -c "import h5py" 2>/dev/null; then
  cases=$((cases + 1))
  "$bin/tensorize" -q --include-final --in h-clock.pgn --out h-clock.h5
  first=$("$python" -c "import h5py; print(h5py.File('h-clock.h5', 'r')['halfmove_clock'][0])")
  [[ $first == 70000 ]] || fail "tensorize stored a halfmove clock of 70000 as $first"
fi
rm -f h-clock.pgn h-clock.h5
expect 1 "^gen_moves: FEN field 5: halfmove clock '1000000' is not a number" \
  "$bin/gen_moves" perft --fen "4k3/8/8/8/8/8/8/R3K3 w - - 1000000 300" --depth 1

# 35.7 --resume knows the data by resolved path and content, not by spelling: ./data.h5 and an
# absolute path from another directory (a Slurm requeue) resume; another dataset under the same
# name, or an options.json that lacks a key to compare, is refused with one line.
resume_ok() {  # resume_ok DIR CMD...: the run resumes
  cases=$((cases + 1))
  rm -rf r7 && cp -r run r7
  (cd "$1" && "${@:2}" -q --out "$work/r7" --resume --arch mlp --hidden 16 --batch-size 16 --max-steps 4 --threads 1 \
    --device cpu) 2>r7.err || fail "train --resume ${*:2} (in $1): $(cat r7.err)"
  rm -f r7.err
}
resume_ok . "$bin/train" --data ./data.h5
resume_ok folder "$bin/train" --data "$work/data.h5"
resume_ok folder "$bin/train" --data ../data.h5
resume_ok . "$bin/train" --data "$work/folder/../data.h5"
mkdir r7-data && cp data.h5 r7-data/d.h5
"$bin/train" -q --data r7-data/d.h5 --out r7-run --arch mlp --hidden 16 --max-steps 3 --batch-size 16 --threads 1 \
  --device cpu --stop-at-step 2
"$bin/tensorize" -q --in many.pgn --out r7-data/d.h5  # another dataset under the same name
expect 1 "^train: --resume: --data '.*/r7-data/d.h5' holds other data than when the run began \([0-9]+ positions, [0-9]+ games, fingerprint \"[0-9a-f]{16}\" now, " \
  "$bin/train" --data r7-data/d.h5 --out r7-run --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
rm -rf r7-data r7-run
options_edit() {  # options_edit PYTHON-STATEMENT REGEX: options.json changed so, refused
  rm -rf r7 && cp -r run r7
  if [[ -n $python ]]; then
    "$python" -c "import json; o = json.load(open('r7/options.json')); $1; json.dump(o, open('r7/options.json', 'w'))"
    expect 1 "$2" "$bin/train" --data data.h5 --out r7 --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
  fi
}
options_edit 'del o["data"]' "^train: --resume: 'r7/options.json' has no 'data' \(edited, or written by an earlier legalnet\)"
options_edit 'o.clear()' "^train: --resume: 'r7/options.json' has no 'data' "
options_edit 'del o["data_files"]' "^train: --resume: 'r7/options.json' has no 'data_files' "
options_edit 'del o["lr"]' "^train: --resume: 'r7/options.json' has no 'lr' "
options_edit 'del o["model"]["hidden"]' "^train: --resume: 'r7/options.json' has no 'model' key 'hidden' "
options_edit 'o["data_files"][0]["fingerprint"] = "0" * 16' \
  "^train: --resume: --data '.*/data.h5' holds other data than when the run began"
options_edit 'o["data_files"][0]["path"] = "/elsewhere/data.h5"' \
  "^train: --resume: --data is \[\"data.h5\"\] here but \[\"data.h5\"\] in the run being resumed \('r7/options.json'\): other files \('.*/data.h5' is not '/elsewhere/data.h5'\)"
rm -rf r7
printf '' > empty-options.json && cp -r run r7 && cp empty-options.json r7/options.json
expect 1 "^train: r7/options.json: not JSON \(" \
  "$bin/train" --data data.h5 --out r7 --resume --arch mlp --hidden 16 --batch-size 16 --device cpu
rm -rf r7 empty-options.json

fi  # part 2

echo "$cases cases, $failures failures"
((failures == 0))
