#!/usr/bin/env bash
# passive_openmp.sh BIN_DIR: train and evaluate run torch's OpenMP threads with
# OMP_WAIT_POLICY=PASSIVE and GOMP_SPINCOUNT=10000 unless the user set a policy, and restart
# themselves for it before libgomp (and libtorch) start: libgomp prints its settings once
# (OMP_DISPLAY_ENV), not once per start. A user's policy or spin count stands.
set -uo pipefail
shopt -s extglob
bin=$(cd "$1" && pwd)
source "$(dirname "$0")/checks.sh"

# settings TOOL ENV...: the wait policy and spin count libgomp printed, every start's on one line.
settings() {
  local tool=$1
  shift
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=VERBOSE "$@" "$bin/$tool" --help 2>&1 >/dev/null |
    sed -n "s/^ *OMP_WAIT_POLICY = '\(.*\)'$/\1/p; s/^ *GOMP_SPINCOUNT = '\(.*\)'$/\1/p" | paste -sd' '
}

# expect TOOL WANTED ENV...: libgomp started once with the policy and spin count WANTED (a glob).
expect() {
  local tool=$1 wanted=$2 got
  shift 2
  got=$(settings "$tool" "$@")
  # shellcheck disable=SC2053
  [[ $got == $wanted ]] ||
    fail "$tool with ${*:-no policy set}: libgomp started with '$got', expected '$wanted' (once)"
}

for tool in train evaluate; do
  expect "$tool" "PASSIVE 10000"
  expect "$tool" "PASSIVE 5" GOMP_SPINCOUNT=5
  expect "$tool" "ACTIVE +([0-9])" OMP_WAIT_POLICY=ACTIVE
done
finish "passive_openmp: train and evaluate start libgomp once, passive with a short spin"
