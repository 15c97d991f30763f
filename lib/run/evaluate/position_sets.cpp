#include "run/evaluate/position_sets.h"

#include "chess/movegen.h"
#include "encode/encode.h"
#include "games/position_list.h"
#include "util/console.h"
#include "util/progress.h"
#include "util/rng.h"
#include "util/thread_pool.h"

namespace legalnet::run {

double sampled_pick_uniform(uint64_t seed, uint64_t row) {
  GameRng rng(seed, (uint64_t(1) << 63) | row);
  return rng.uniform();
}

eval::SituationCard evaluate_position_set(const EvaluatedNet& net, const std::string& path, const EvaluateOptions& o) {
  const std::vector<std::string> fens = read_position_list(path);
  const size_t batch = size_t(o.batch_size);
  eval::SituationCard card;
  // The positions are scored on every thread (the net's threads wait meanwhile): on one, the
  // scoring held up the second core for a large set (docs/benchmarks.md#log-2026-12-06-inference).
  ThreadPool pool(worker_threads(o.threads));
  std::vector<eval::SituationCard::Scored> scored;
  Progress progress("positions", fens.size(), !o.quiet && stderr_is_terminal());
  for (size_t start = 0; start < fens.size(); start += batch) {
    const size_t count = std::min(batch, fens.size() - start);
    std::vector<chess::Position> positions;
    positions.reserve(count);
    for (size_t i = 0; i < count; ++i) positions.emplace_back(fens[start + i]);
    const std::vector<float> probs = net.predict(positions);
    scored.assign(count, {});
    const size_t part = (count + size_t(pool.size()) - 1) / size_t(pool.size());
    std::vector<std::future<void>> parts;
    for (size_t first = 0; first < count; first += part)
      parts.push_back(pool.submit([&, first] {
        for (size_t i = first; i < std::min(count, first + part); ++i)
          scored[i] =
              eval::SituationCard::score(positions[i], chess::MoveList(positions[i]), &probs[i * encode::MOVE_INDICES],
                                         o.threshold, sampled_pick_uniform(o.seed, start + i));
      }));
    for (auto& p : parts) p.get();
    for (const auto& s : scored) card.add(s);  // in order: the same sums for any thread count
    progress.update(start + count);
  }
  progress.finish();
  return card;
}

}  // namespace legalnet::run
