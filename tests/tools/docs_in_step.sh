#!/usr/bin/env bash
# docs_in_step.sh BIN_DIR DOC: every long option a tool's --help lists appears in the doc.
set -euo pipefail
bin=$1 doc=$2
missing=0
for tool in gen_moves tensorize train evaluate; do
  for option in $("$bin/$tool" --help | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    [[ $option == --help || $option == --version ]] && continue
    if ! grep -q -- "$option" "$doc"; then
      echo "$tool $option is not in $doc"
      missing=1
    fi
  done
done
exit $missing
