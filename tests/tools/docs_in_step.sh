#!/usr/bin/env bash
# docs_in_step.sh BIN_DIR DOC: every long option a tool's --help lists (its subcommands' too)
# appears in that tool's own section of the doc ("## gen_moves" up to the next "## "), so an
# option documented under another tool does not count.
set -euo pipefail
bin=$1 doc=$2
missing=0
for tool in gen_moves tensorize train evaluate; do
  section=$(awk -v head="## $tool" '$0 == head {on = 1; next} /^## / {on = 0} on' "$doc")
  if [[ -z $section ]]; then
    echo "$doc has no '## $tool' section"
    missing=1
    continue
  fi
  help=$("$bin/$tool" --help)
  for sub in $(printf '%s\n' "$help" | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
    help+=$'\n'$("$bin/$tool" "$sub" --help)
  done
  for option in $(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    [[ $option == --help || $option == --version ]] && continue
    if ! grep -qE -- "${option}([^a-z0-9-]|$)" <<< "$section"; then
      echo "$tool $option is not in the '## $tool' section of $doc"
      missing=1
    fi
  done
done
exit $missing
