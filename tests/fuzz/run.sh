#!/bin/bash
# The fuzz step of `make test`: each libFuzzer target for SECONDS, then a verdict.
#   tests/fuzz/run.sh BUILD_FUZZ_DIR SECONDS
# fen, pgn, dataset_layout and safetensors (the bounded JSON reader and the safetensors header
# parser) test only legalnet's code: any finding fails the run. dataset feeds
# raw bytes to HDF5's parser, and Debian 12's libhdf5 1.10.8 crashes, hangs or asks for
# petabytes on some damaged files before or while the reader's checks run (docs/dataset.md):
# it runs in fork mode, and each finding is replayed and blamed on the first frame of its stack
# outside the sanitizer and libFuzzer runtimes: inside libhdf5 it is counted and listed, anywhere
# else it fails the run.
set -u -o pipefail
dir=$1 seconds=$2
src=$(cd "$(dirname "$0")" && pwd)
bin=$dir/bin
status=0
export ASAN_OPTIONS=allocator_may_return_null=1:fast_unwind_on_malloc=0:malloc_context_size=30
# Every frame names its module, symbolized or not (with libc6-dbg installed, libc's frames are
# printed as source lines, without the module), so that a finding can be blamed on a module.
replay_format='stack_trace_format="    #%n in %m %f"'
export LSAN_OPTIONS=suppressions=$src/lsan-libhdf5.supp
# The targets' input files (tests/fuzz/fuzz_input.h), one per process, gone with the run.
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/legalnet-fuzz.XXXXXX") || exit 1
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

for t in fen pgn dataset_layout safetensors; do
  case $t in
    fen) seeds=("$src/corpus/fen") len=4096 ;;
    safetensors) seeds=("$src/corpus/safetensors") len=8192 ;;
    pgn) seeds=("$src/corpus/pgn" "$src/../pgn/corpus") len=4096 ;;
    dataset_layout) seeds=() len=4096 ;;
  esac
  mkdir -p "$dir/corpus-$t" "$dir/findings-$t"
  if ! "$bin/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -max_len=$len -print_final_stats=0 \
      -artifact_prefix="$dir/findings-$t/" "$dir/corpus-$t" "${seeds[@]}" >"$dir/$t.log" 2>&1; then
    tail -n 40 "$dir/$t.log"
    echo "fuzz: ${t}_fuzz found a crash (input in $dir/findings-$t/)"
    status=1
  else
    echo "fuzz: ${t}_fuzz: $(grep -E '^Done [0-9]+ runs' "$dir/$t.log")"
  fi
done

# The raw-bytes dataset fuzzer, seeded with small datasets that this build's tensorize writes
# (plain, with final positions and deduplicated, and a virtual join of the two).
seeds=$dir/seed-dataset findings=$dir/findings-dataset
rm -rf "$seeds" "$findings" && mkdir -p "$seeds" "$findings" "$dir/corpus-dataset"
{ "$bin/gen_moves" --games 3 --seed 1 --max-plies 6 --out "$seeds/games.pgn" &&
  "$bin/tensorize" -q --in "$seeds/games.pgn" --out "$seeds/plain.h5" &&
  "$bin/tensorize" -q --in "$seeds/games.pgn" --out "$seeds/final.h5" --include-final --dedupe &&
  "$bin/tensorize" merge --out "$seeds/joined.h5" "$seeds/plain.h5" "$seeds/final.h5" && rm "$seeds/games.pgn"; } \
  >"$dir/seed-dataset.log" 2>&1 || { cat "$dir/seed-dataset.log"; echo "fuzz: cannot write the seed datasets"; exit 1; }
"$bin/dataset_fuzz" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=5 -rss_limit_mb=2048 \
  -max_total_time="$seconds" -max_len=131072 -print_final_stats=0 -artifact_prefix="$findings/" \
  "$dir/corpus-dataset" "$seeds" >"$dir/dataset.log" 2>&1
if ! grep -q '^INFO: fuzzed for' "$dir/dataset.log"; then
  tail -n 40 "$dir/dataset.log"
  echo "fuzz: dataset_fuzz did not run"
  exit 1
fi
# A frame reads "#N in MODULE FUNCTION". The C and C++ runtimes' modules and the sanitizer's and
# libFuzzer's functions (linked into the target) are skipped: a memcpy is blamed on its caller.
runtime_module='/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^ /]*)\.so[^ ]* '
runtime_function='__sanitizer|__asan|__lsan|__interceptor|fuzzer::|Fuzzer|LLVMFuzzer|in [^ ]+ (malloc|calloc|realloc|free|operator new)|_start|__libc'
library=0 ours=0 gone=0
for input in "$findings"/*; do
  [ -f "$input" ] || continue
  replay=$(ASAN_OPTIONS="$ASAN_OPTIONS:$replay_format" timeout 60 "$bin/dataset_fuzz" -timeout=5 "$input" 2>&1)
  if [ $? -eq 0 ]; then  # a timeout of a slow moment on a busy machine, not a hang
    gone=$((gone + 1))
    continue
  fi
  first=$(grep -E '^ +#[0-9]+ in ' <<<"$replay" | grep -vE "$runtime_module" | grep -vE "$runtime_function" | head -n 1)
  if [[ $first == *libhdf5* ]]; then
    library=$((library + 1))
  else
    ours=$((ours + 1))
    echo "fuzz: dataset_fuzz: $input fails outside libhdf5: ${first:-(no stack: replay it)}"
  fi
done
echo "fuzz: dataset_fuzz: $(grep -oE 'oom/timeout/crash: [0-9/]+' "$dir/dataset.log" | tail -n 1);" \
     "$library inside libhdf5 (kept in $findings), $ours elsewhere, $gone not reproduced"
[ $ours -eq 0 ] || status=1
exit $status
