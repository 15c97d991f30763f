#include "eval/position_search.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "chess/legal_edits.h"
#include "chess/movegen.h"
#include "encode/encode.h"
#include "eval/situations.h"
#include "util/rng.h"

namespace legalnet::eval {

using namespace chess;

namespace {

uint32_t situations(const Position& pos) { return situations_of(pos, MoveList(pos)); }

double worst_margin(const encode::LegalMask& mask, const float* probs) {
  double worst = 0;
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    const double p = probs[i];
    worst = std::max(worst, mask[i] ? 1.0 - p : p);
  }
  return worst;
}

// A position's score: the margin climbed, and whether its legal set is wrong at the threshold
// (the report card's exact set, encode::exact_set).
struct Score {
  double margin;
  bool wrong;
};

Score score(const Position& pos, const float* probs, float threshold) {
  const encode::LegalMask mask{MoveList(pos)};
  return {worst_margin(mask, probs), !encode::exact_set(probs, mask, threshold)};
}

}  // namespace

double worst_margin(const Position& pos, const float* probs) {
  return worst_margin(encode::LegalMask{MoveList(pos)}, probs);
}

Proportion SearchSummary::broken() const {
  Proportion p{0, starts.size()};
  for (const auto& s : starts) p.count += s.broken;
  return p;
}

double SearchSummary::median_evaluations_to_break() const {
  std::vector<int> n;
  for (const auto& s : starts)
    if (s.broken) n.push_back(s.evaluations);
  if (n.empty()) return 0;
  std::sort(n.begin(), n.end());
  return n.size() % 2 ? n[n.size() / 2] : 0.5 * (n[n.size() / 2 - 1] + n[n.size() / 2]);
}

namespace {

struct Walker {
  Position current;
  GameRng rng;
  SearchStart result;
  bool done = false;
  Walker(const Position& start, uint64_t seed, uint64_t index) : current(start), rng(seed, index) {}
};

}  // namespace

SearchSummary search_positions(const Predictor& predict, const std::vector<std::string>& starts,
                               const SearchOptions& o) {
  const auto clock_start = std::chrono::steady_clock::now();
  std::vector<Walker> walkers;
  for (size_t i = 0; i < starts.size(); ++i) {
    walkers.emplace_back(Position(starts[i]), o.seed, uint64_t(i));
    walkers.back().result.start = walkers.back().current.fen();
  }
  // The starts themselves, in one batch.
  {
    std::vector<const Position*> batch;
    for (auto& w : walkers) batch.push_back(&w.current);
    std::vector<float> probs(batch.size() * encode::MOVE_INDICES, 0.0f);
    if (!batch.empty()) predict(batch, probs);
    for (size_t i = 0; i < walkers.size(); ++i) {
      Walker& w = walkers[i];
      w.result.evaluations = 1;
      w.result.worst = w.result.start;
      const Score s = score(w.current, probs.data() + i * encode::MOVE_INDICES, o.threshold);
      w.result.worst_margin = s.margin;
      w.result.situations = situations(w.current);
      if (s.wrong) w.result.broken = w.result.start_broken = w.done = true;
    }
  }
  const int per_round = o.random_walk ? 1 : std::max(1, o.candidates);
  std::vector<Position> candidates;
  std::vector<size_t> owner;
  for (;;) {
    candidates.clear();
    owner.clear();
    for (size_t i = 0; i < walkers.size(); ++i) {
      Walker& w = walkers[i];
      if (w.done) continue;
      const int room = std::min(per_round, o.budget - w.result.evaluations);
      if (room <= 0) {
        w.done = true;
        continue;
      }
      for (int c = 0; c < room; ++c)
        if (std::optional<Position> next = random_edit(w.current, w.rng)) {
          candidates.push_back(*next);
          owner.push_back(i);
        }
      if (owner.empty() || owner.back() != i) w.done = true;  // no legal edit at all
    }
    if (candidates.empty()) break;
    std::vector<const Position*> batch;
    for (const auto& c : candidates) batch.push_back(&c);
    std::vector<float> probs(batch.size() * encode::MOVE_INDICES, 0.0f);
    predict(batch, probs);
    // Each walker takes its best candidate (steepest ascent; the random walk its only one).
    std::vector<int> best(walkers.size(), -1);
    std::vector<double> best_margin(walkers.size(), -1);
    for (size_t c = 0; c < candidates.size(); ++c) {
      Walker& w = walkers[owner[c]];
      if (w.result.broken) continue;
      ++w.result.evaluations;
      const Score s = score(candidates[c], probs.data() + c * encode::MOVE_INDICES, o.threshold);
      if (s.margin > best_margin[owner[c]]) best_margin[owner[c]] = s.margin, best[owner[c]] = int(c);
      if (s.margin > w.result.worst_margin || s.wrong) {
        w.result.worst_margin = s.margin;
        w.result.worst = candidates[c].fen();
        w.result.situations = situations(candidates[c]);
      }
      if (s.wrong) w.result.broken = w.done = true;
    }
    for (size_t i = 0; i < walkers.size(); ++i)
      if (best[i] >= 0 && !walkers[i].done) walkers[i].current = std::move(candidates[size_t(best[i])]);
  }
  SearchSummary summary;
  for (auto& w : walkers) summary.starts.push_back(std::move(w.result));
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  return summary;
}

}  // namespace legalnet::eval
