#!/usr/bin/env bash
# people_positions.sh MODEL [WORK]: evaluates a model on positions made by people, off the path of
# random games (docs/benchmarks.md, "Positions made by people"), from Debian's pychess package
# (downloaded, never installed; no other source):
#   - mates: its 914 mate-in-2/3/4 puzzles (909 read; 5 have a malformed tag), positions of real
#     games (Morphy, Anderssen, ...) and their solutions to the mate, every position of each line
#     (tensorize --include-final);
#   - problems: its 6,124 composed problems and studies (Loyd, Kubbel, Troicki, ...) as a FEN
#     list (bench/problem_positions.py: the 6,010 orthodox, legal and distinct ones).
# WORK (default build/people) keeps the package and the sets between runs.
set -euo pipefail
model=${1:?usage: people_positions.sh MODEL [WORK]}
work=${2:-${BUILD:-build}/people}
bin=${BIN:-build/bin}
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-$("$here/../scripts/python-env")/bin/python}
mkdir -p "$work"
puzzles=$work/pychess/usr/share/pychess/learn/puzzles
if [[ ! -d $puzzles ]]; then
  (cd "$work" && apt-get download pychess >/dev/null && dpkg -x pychess_*.deb pychess)
fi
if [[ ! -s $work/problems.fen ]]; then
  "$python" "$here/problem_positions.py" "$puzzles"/*.olv > "$work/problems.fen.tmp"
  mv "$work/problems.fen.tmp" "$work/problems.fen"
fi
for n in 2 3 4; do
  # A few puzzles have a malformed tag (a quoted name in quotes): tensorize skips them by name.
  [[ -s $work/mate$n.h5 ]] || "$bin/tensorize" --in "$puzzles/mate_in_$n.pgn" --include-final \
    --out "$work/mate$n.h5" -q
done
"$bin/evaluate" --model "$model" --data "$work/mate2.h5" --data "$work/mate3.h5" --data "$work/mate4.h5" \
  --max-positions 0 --positions "$work/problems.fen" --games 0 -q
