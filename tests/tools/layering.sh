#!/usr/bin/env bash
# layering.sh SOURCE_DIR: the library's parts depend one way (docs/architecture.md). Fails,
# naming the file and line, when a folder of lib/ includes one above it, when torch is
# included outside nn/, train/ and run/ (the object library compiled against torch), or HDF5
# outside data/.
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
  [nn]="chess encode nn util"
  [train]="chess data encode nn train util"
  [run]="chess data encode eval games nn pgn run train util"
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
  if [[ " nn train run " != *" $folder "* ]]; then
    grep -nE '^#include <(torch|ATen|c10)/' -r "$folder" | sed 's/^/layering: torch outside nn\/, train\/, run\/: lib\//' && status=1
  fi
  if [[ $folder != data ]]; then
    grep -nE '^#include <(hdf5|H5)' -r "$folder" | sed 's/^/layering: HDF5 outside data\/: lib\//' && status=1
  fi
done
[[ $status == 0 ]] && echo "layering ok: $(ls -d */ | wc -l) folders"
exit $status
