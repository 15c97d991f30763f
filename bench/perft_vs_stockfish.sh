#!/usr/bin/env bash
# perft_vs_stockfish.sh [DEPTH] [FEN]: times our perft and Stockfish's "go perft" on the same
# position in one run, one thread each; both count leaves in bulk at the last ply.
set -euo pipefail
depth=${1:-6}
fen=${2:-startpos}
bin=${BIN:-build/bin}
stockfish=${STOCKFISH:-$(command -v stockfish || echo /usr/games/stockfish)}
sf_position=$([[ $fen == startpos ]] && echo "position startpos" || echo "position fen $fen")

now() { date +%s.%N; }
t0=$(now)
ours=$("$bin/gen_moves" perft --fen "$fen" --depth "$depth" | awk '/Nodes searched/ {print $3}')
t1=$(now)
theirs=$(printf '%s\ngo perft %s\nquit\n' "$sf_position" "$depth" | "$stockfish" | awk '/Nodes searched/ {print $3}')
t2=$(now)
awk -v a="$ours" -v b="$theirs" -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
  ours = a / (t1 - t0); sf = b / (t2 - t1);
  printf "legalnet  perft: %d nodes, %.3f s, %.1f M nodes/s\n", a, t1 - t0, ours / 1e6;
  printf "stockfish perft: %d nodes, %.3f s, %.1f M nodes/s\n", b, t2 - t1, sf / 1e6;
  printf "ratio legalnet / stockfish: %.2f\n", ours / sf;
  if (a != b) { print "NODE COUNTS DIFFER"; exit 1 }
}'
