#!/usr/bin/env bash
# git_describe.sh SOURCE_DIR: cmake/GitDescribe.cmake, which the build runs every time, names the
# tree as it is at that build: a commit, an edit (-dirty), the next commit; it leaves the file
# untouched while the description stays (so a build with nothing new compiles nothing), and says
# "unknown" outside git.
set -euo pipefail
script=$1/cmake/GitDescribe.cmake
. "$(dirname "$0")/checks.sh"
repo=$work/repo
out=$work/git_describe.cpp
mkdir "$repo"
export GIT_CEILING_DIRECTORIES=$work  # "outside git" even where the scratch folder is inside a repository
git_() { git -C "$repo" -c user.name=test -c user.email=test@example.org "$@"; }
describe() { cmake -DSOURCE_DIR="$repo" -DOUTPUT="$out" -P "$script"; }
named() { grep -q "GIT_DESCRIBE = \"$1\";" "$out" || fail "$2: expected \"$1\" in: $(grep GIT_DESCRIBE "$out")"; }

describe
named unknown "outside git"
git_ init -q
echo a > "$repo/file"
git_ add file
git_ commit -qm one
describe
first=$(git_ rev-parse --short HEAD)
named "$first" "after the first commit"
touch -d '2000-01-01' "$out"
describe
[[ $(stat -c %Y "$out") == $(date -d '2000-01-01' +%s) ]] || fail "rewritten with the same description"
echo b > "$repo/file"
describe
named "$first-dirty" "after an edit"
git_ commit -qam two
describe
named "$(git_ rev-parse --short HEAD)" "after the second commit"
git_ tag v9.9.9
describe
named v9.9.9 "at a tag"
git_ tag 'v"quoted"'
git_ tag -d v9.9.9 > /dev/null
describe
grep -qF 'GIT_DESCRIBE = "v\"quoted\"";' "$out" || fail "a tag with quotes: $(grep GIT_DESCRIBE "$out")"
[[ ! -e $out.new ]] || fail "the temporary file was left behind"
finish "git_describe: the build names the tree as it is"
