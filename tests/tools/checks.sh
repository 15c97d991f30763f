# checks.sh, sourced by the tool tests in this folder: a scratch folder, $work, removed on exit;
# fail MESSAGE, which prints the failure and counts it in $failures; finish SUMMARY, which ends
# the test: the count and status 1 after a failure, else SUMMARY and status 0; small_dataset,
# which makes games.pgn and data.h5 (40 random games of seed 3) in the current folder with
# the tools in $bin, or ends the test.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

finish() {
  if ((failures > 0)); then
    echo "$failures failures"
    exit 1
  fi
  echo "$1"
  exit 0
}

small_dataset() {
  "$bin/gen_moves" --games 40 --seed 3 --out games.pgn 2>/dev/null &&
    "$bin/tensorize" -q --in games.pgn --out data.h5 || { echo "FAIL: could not make the data"; exit 1; }
}
