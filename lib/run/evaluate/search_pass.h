// evaluate --search: from positions of a list, a search for positions the model gets wrong
// (eval/position_search.h), and random legal edits from the same starts as its baseline.
#pragma once

#include <optional>
#include <string>

#include "run/evaluate/options.h"
#include "run/evaluate/prediction.h"
#include "run/evaluate/report.h"

namespace legalnet::run {

// --search-starts positions of the list at `path` drawn by --seed (all of a shorter list), each
// searched from.
SearchFigures search_from_list(const EvaluatedNet& net, const std::string& path, const EvaluateOptions& options);

}  // namespace legalnet::run
