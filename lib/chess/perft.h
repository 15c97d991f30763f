// Perft: the number of leaf nodes of the legal move tree, the standard move-generator check.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "chess/position.h"

namespace legalnet::chess {

// Leaves at `depth` plies below pos (moves are counted in bulk at the last ply).
uint64_t perft(Position& pos, int depth);

// Leaves below each legal root move, in generation order (Stockfish's "go perft" divide).
std::vector<std::pair<Move, uint64_t>> perft_divide(Position& pos, int depth);

}  // namespace legalnet::chess
