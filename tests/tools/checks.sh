# checks.sh, sourced by the tool tests in this folder: a scratch folder, $work, removed on exit;
# fail MESSAGE, which prints the failure and counts it in $failures; finish SUMMARY, which ends
# the test: the count and status 1 after a failure, else SUMMARY and status 0.
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
