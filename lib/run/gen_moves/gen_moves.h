// The gen_moves tool: random games played in parallel, written as PGN in game-index order.
#pragma once

#include "run/gen_moves/options.h"
#include "run/gen_moves/report.h"
#include "run/gen_moves/shards.h"

namespace legalnet::run {

// Runs the tool; throws legalnet::Error on bad options or failed output.
GenMovesReport run_gen_moves(const GenMovesOptions& options);

}  // namespace legalnet::run
