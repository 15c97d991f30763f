#include "run/evaluate/position_sets.h"

#include "chess/movegen.h"
#include "encode/encode.h"
#include "games/position_list.h"
#include "util/console.h"
#include "util/progress.h"
#include "util/rng.h"

namespace legalnet::run {

double sampled_pick_uniform(uint64_t seed, uint64_t row) {
  GameRng rng(seed, (uint64_t(1) << 63) | row);
  return rng.uniform();
}

eval::SituationCard evaluate_position_set(const EvaluatedNet& net, const std::string& path, const EvaluateOptions& o) {
  const std::vector<std::string> fens = read_position_list(path);
  const size_t batch = size_t(o.batch_size);
  eval::SituationCard card;
  Progress progress("positions", fens.size(), !o.quiet && stderr_is_terminal());
  for (size_t start = 0; start < fens.size(); start += batch) {
    const size_t count = std::min(batch, fens.size() - start);
    std::vector<chess::Position> positions;
    positions.reserve(count);
    for (size_t i = 0; i < count; ++i) positions.emplace_back(fens[start + i]);
    const std::vector<float> probs = net.predict(positions);
    for (size_t i = 0; i < count; ++i)
      card.add(positions[i], chess::MoveList(positions[i]), &probs[i * encode::MOVE_INDICES], o.threshold,
               sampled_pick_uniform(o.seed, start + i));
    progress.update(start + count);
  }
  progress.finish();
  return card;
}

}  // namespace legalnet::run
