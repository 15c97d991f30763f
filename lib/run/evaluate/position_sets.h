// evaluate's report card by situation over position sets (--positions: FEN/EPD lists, as random
// placements, the perft trees or any list a user brings); the dataset pass fills one too.
#pragma once

#include <string>

#include "eval/situations.h"
#include "run/evaluate/options.h"
#include "run/evaluate/prediction.h"

namespace legalnet::run {

// The draw of the sampled pick of row `row`: its own stream of the evaluation's seed, apart from
// the games' streams (game indices are far below 2^63).
double sampled_pick_uniform(uint64_t seed, uint64_t row);

// The card of every position of the list at `path` (games/position_list.h), in batches of
// --batch-size, at --threshold, the picks drawn from --seed.
eval::SituationCard evaluate_position_set(const EvaluatedNet& net, const std::string& path,
                                          const EvaluateOptions& options);

}  // namespace legalnet::run
