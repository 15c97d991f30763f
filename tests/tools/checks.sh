# checks.sh, sourced by the tool tests in this folder: a scratch folder, $work, removed on exit,
# and fail MESSAGE, which prints the failure and counts it in $failures.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
