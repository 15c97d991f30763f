#include "run/evaluate/search_pass.h"

#include <algorithm>
#include <numeric>

#include "games/position_list.h"
#include "util/rng.h"

namespace legalnet::run {

SearchFigures search_from_list(const EvaluatedNet& net, const std::string& path, const EvaluateOptions& o) {
  std::vector<std::string> fens = read_position_list(path);
  // A seeded draw without replacement (a partial Fisher-Yates), from a stream apart from the
  // games' and the sampled picks'.
  GameRng rng(o.seed, (uint64_t(3) << 62) | 1);
  const size_t n = std::min(fens.size(), size_t(o.search_starts));
  for (size_t i = 0; i < n; ++i) std::swap(fens[i], fens[i + rng.below(uint32_t(fens.size() - i))]);
  fens.resize(n);
  const eval::Predictor predict = [&](const std::vector<const chess::Position*>& positions, std::vector<float>& probs) {
    probs = net.predict(positions);
  };
  SearchFigures figures;
  figures.path = path;
  eval::SearchOptions search;
  search.budget = o.search_budget;
  search.threshold = o.threshold;
  search.seed = o.seed;
  figures.search = eval::search_positions(predict, fens, search);
  if (o.random_edit_budget > 0) {
    search.budget = o.random_edit_budget;
    search.random_walk = true;
    figures.random_edits = eval::search_positions(predict, fens, search);
  }
  return figures;
}

}  // namespace legalnet::run
