#!/usr/bin/env bash
# expect_error.sh REGEX COMMAND...: passes when COMMAND exits with status 1 (a handled error,
# not a crash or a signal) and prints exactly one line on stderr that matches REGEX.
set -u
regex=$1
shift
err=$("$@" 2>&1 >/dev/null)
status=$?
if [[ $status -ne 1 ]]; then
  echo "expected exit status 1, got $status; stderr: $err"
  exit 1
fi
if [[ $(printf '%s\n' "$err" | wc -l) -ne 1 ]] || ! [[ $err =~ $regex ]]; then
  echo "stderr does not match /$regex/ on one line: $err"
  exit 1
fi
