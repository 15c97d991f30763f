#!/usr/bin/env bash
# layering.sh SOURCE_DIR: the library's parts depend one way (docs/architecture.md). Fails,
# naming the file and line, when a folder of lib/ includes one above it, when torch is
# included outside kernels/, compute/, nn/, train/ and run/ (the object libraries compiled
# against torch), HDF5 outside data/, a kernel's insides outside kernels/, or when the files'
# includes form a cycle (a .cpp and its .h count as one).
set -euo pipefail
cd "$1/lib"
declare -A allowed=(
  [util]="util"
  [chess]="chess util"
  [encode]="chess encode util"
  [pgn]="chess pgn util"
  [games]="chess games pgn util"
  [eval]="chess encode eval util"
  [data]="chess data encode util"
  [kernels]="kernels util"
  [compute]="compute kernels util"
  [nn]="chess compute encode kernels nn util"
  [train]="chess compute data encode kernels nn train util"
  [run]="chess compute data encode eval games kernels nn pgn run train util"
)
status=0
for folder in */; do
  folder=${folder%/}
  [[ -n ${allowed[$folder]+x} ]] || { echo "layering: lib/$folder is not in tests/tools/layering.sh"; status=1; continue; }
  while IFS=: read -r file line text; do
    used=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$text")
    [[ " ${allowed[$folder]} " == *" $used "* ]] ||
      { echo "layering: lib/$file:$line: $folder/ must not include $used/ ($text)"; status=1; }
  done < <(grep -nE '^#include "[a-z_]+/' --include='*.h' --include='*.cpp' -r "$folder" || true)
  if [[ " kernels compute nn train run " != *" $folder "* ]]; then
    grep -nE '^#include <(torch|ATen|c10)/' -r "$folder" |
      sed 's/^/layering: torch outside kernels\/, compute\/, nn\/, train\/, run\/: lib\//' && status=1
  fi
  # The kernels are behind one header: outside kernels/, only kernels/kernels.h.
  if [[ $folder != kernels ]]; then
    grep -nE '^#include "kernels/' -r "$folder" | grep -v '"kernels/kernels.h"' |
      sed 's/^/layering: a kernel'"'"'s insides included outside kernels\/ (kernels\/kernels.h is its header): lib\//' && status=1
  fi
  if [[ $folder != data ]]; then
    grep -nE '^#include <(hdf5|H5)' -r "$folder" | sed 's/^/layering: HDF5 outside data\/: lib\//' && status=1
  fi
done
# Inside a folder too, no include points back up: the files' includes form no cycle (tsort
# names the files of one).
edges=$(grep -rnoE '^#include "[a-z_]+/[a-z_0-9]+\.(h|inc)"' --include='*.h' --include='*.cpp' --include='*.inc' . |
  sed -E 's#^\./([^:]+):[0-9]+:\#include "(.*)"#\1 \2#' | sed -E 's#\.(h|cpp|inc) # #; s#\.(h|inc)$##')
if ! loops=$(tsort <<<"$edges" 2>&1 >/dev/null) || [[ -n $loops ]]; then
  echo "layering: includes that run back up (a cycle): $(tr '\n' ' ' <<<"$loops")"
  status=1
fi
[[ $status == 0 ]] && echo "layering ok: $(ls -d */ | wc -l) folders"
exit $status
