// Perft: the number of leaf nodes of the legal move tree, the standard move-generator check.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "chess/position.h"

namespace legalnet::chess {

// Leaves at `depth` plies below pos (moves are counted in bulk at the last ply).
uint64_t perft(Position& pos, int depth);

// The chessprogramming wiki's standard positions and Martin Sedlak's tricky ones (castling
// through check, en passant exposing the king, under-promotions, stalemates), each with a
// published leaf count: the move generator's test suite, and gen_moves' `--start perft` set.
struct PerftCase {
  const char* fen;
  int depth;
  uint64_t nodes;
};
extern const std::vector<PerftCase> PERFT_SUITE;

// Leaves below each legal root move, in generation order (Stockfish's "go perft" divide).
std::vector<std::pair<Move, uint64_t>> perft_divide(Position& pos, int depth);

}  // namespace legalnet::chess
