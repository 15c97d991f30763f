// gen_moves positions: sets of positions to measure a model on, away from the positions random
// games reach (random placements, the perft suite and the trees below them), as FEN lists.
#pragma once

#include <cstdint>

#include "run/gen_moves/options.h"

namespace legalnet::run {

// Writes the set: the starts in order, each followed by the positions of its tree (depth first,
// moves in generation order), every FEN once. Returns the number of positions written.
uint64_t run_gen_positions(const GenPositionsOptions& options);

}  // namespace legalnet::run
