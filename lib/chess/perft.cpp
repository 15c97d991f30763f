#include "chess/perft.h"

#include "chess/movegen.h"

namespace legalnet::chess {

uint64_t perft(Position& pos, int depth) {
  if (depth <= 0) return 1;
  const MoveList moves(pos);
  if (depth == 1) return uint64_t(moves.size());
  uint64_t nodes = 0;
  for (Move m : moves) {
    pos.do_move(m);
    nodes += perft(pos, depth - 1);
    pos.undo_move(m);
  }
  return nodes;
}

std::vector<std::pair<Move, uint64_t>> perft_divide(Position& pos, int depth) {
  std::vector<std::pair<Move, uint64_t>> result;
  for (Move m : MoveList(pos)) {
    pos.do_move(m);
    result.emplace_back(m, perft(pos, depth - 1));
    pos.undo_move(m);
  }
  return result;
}

}  // namespace legalnet::chess
