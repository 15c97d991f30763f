// gen_moves positions: sets of positions to measure a model on, away from the positions random
// games reach (random placements, the perft suite and the trees below them), as FEN lists.
#pragma once

#include <cstdint>
#include <string>

namespace legalnet::run {

struct GenPositionsOptions {
  std::string start = "placement";  // placement | perft | a FEN/EPD list
  uint64_t count = 0;               // placements drawn (placement only)
  int depth = 0;                    // also every position up to this many plies below each start
  uint64_t seed = 0;
  std::string out = "-";  // FEN list, one a line ("-": stdout; .gz / .zst compress)
};

// Writes the set: the starts in order, each followed by the positions of its tree (depth first,
// moves in generation order), every FEN once. Returns the number of positions written.
uint64_t run_gen_positions(const GenPositionsOptions& options);

}  // namespace legalnet::run
