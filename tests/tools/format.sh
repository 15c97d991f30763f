#!/usr/bin/env bash
# format.sh SOURCE_DIR: the C++ sources keep .clang-format's layout (clang-format 14, the version
# scripts/install-deps installs on Debian 12; another version lays some lines out otherwise, so
# the test is skipped there, status 77). Lists the files that differ and how to fix them.
set -uo pipefail
cd "$1" || exit 1
command -v clang-format > /dev/null || { echo "format: no clang-format (scripts/install-deps installs it)"; exit 77; }
version=$(clang-format --version | grep -oE 'version [0-9]+' | grep -oE '[0-9]+')
[[ $version == 14 ]] || { echo "format: clang-format $version, not 14: skipped"; exit 77; }
mapfile -t files < <(git ls-files -co --exclude-standard -- lib tools tests bench | grep -E '\.(h|cpp)$')
differ=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || differ+=("$f")
done
if ((${#differ[@]} > 0)); then
  echo "format: ${#differ[@]} files differ from .clang-format (clang-format -i FILE):"
  printf '  %s\n' "${differ[@]}"
  exit 1
fi
echo "format ok: ${#files[@]} files"
