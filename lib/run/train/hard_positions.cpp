#include "run/train/hard_positions.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "chess/legal_edits.h"
#include "chess/movegen.h"
#include "encode/encode.h"
#include "eval/position_search.h"
#include "games/placement.h"
#include "util/error.h"
#include "util/rng.h"

namespace legalnet::run {
namespace {

using chess::Position;

// The random streams of the mining, apart from the data order's and the games' (top bits 10).
constexpr uint64_t REFRESH_STREAM = uint64_t(2) << 62;
constexpr uint64_t DRAW_STREAM = (uint64_t(2) << 62) | (uint64_t(1) << 61);
// A fresh start's random game is this many plies long at most (uniform from 0).
constexpr int FRESH_MAX_PLIES = 160;

// A position as the pool keeps it: set from its own FEN, so that a pool restored from a
// checkpoint's text is the same positions, history and all.
Position normalized(const Position& pos) { return Position(pos.fen()); }

// A fresh start: a random legal placement (one draw in two), or the position after a random
// number of random legal moves from the standard start.
Position fresh_start(GameRng& rng) {
  if (rng.below(2) == 0) return normalized(random_placement(rng));
  Position pos;
  const int plies = int(rng.below(FRESH_MAX_PLIES + 1));
  for (int ply = 0; ply < plies; ++ply) {
    const chess::MoveList moves(pos);
    if (moves.empty()) break;
    pos.do_move(moves[int(rng.below(uint32_t(moves.size())))]);
  }
  return normalized(pos);
}

// Candidate neighbours of `pos`: up to half of them the positions after its legal moves (drawn
// without replacement), the rest random legal edits.
void neighbours(const Position& pos, GameRng& rng, std::vector<Position>& out) {
  const chess::MoveList moves(pos);
  std::vector<chess::Move> order(moves.begin(), moves.end());
  const int children = std::min(int(order.size()), HardPositions::CANDIDATES / 2);
  for (int c = 0; c < children; ++c) {
    std::swap(order[size_t(c)], order[size_t(c) + rng.below(uint32_t(order.size()) - uint32_t(c))]);
    Position child = pos;
    child.do_move(order[size_t(c)]);
    out.push_back(normalized(child));
  }
  for (int e = children; e < HardPositions::CANDIDATES; ++e)
    if (std::optional<Position> edited = chess::random_edit(pos, rng)) out.push_back(normalized(*edited));
}

}  // namespace

HardPositions::HardPositions(const MiningOptions& options) : options_(options) {}

int HardPositions::rows_of(double share, int rows) {
  return std::clamp(int(std::lround(share * rows)), 1, std::max(1, rows - 1));
}

void HardPositions::refresh(int64_t step, const eval::Predictor& predict) {
  const int64_t round = step / options_.every;
  GameRng rng(options_.seed, REFRESH_STREAM | uint64_t(round));
  const size_t n = size_t(options_.pool);
  if (pool_.size() != n) pool_.assign(n, Position());
  // One position in CLIMB starts again each refresh (all of them at the first).
  for (size_t i = 0; i < n; ++i)
    if (round == 0 || (uint64_t(round) + i) % CLIMB == 0) pool_[i] = fresh_start(rng);
  std::vector<Position> candidates;
  std::vector<size_t> owner;
  for (size_t i = 0; i < n; ++i) {
    const size_t before = candidates.size();
    neighbours(pool_[i], rng, candidates);
    // A position with no neighbour (no legal move, no legal edit found) stays: its own candidate.
    if (candidates.size() == before) candidates.push_back(pool_[i]);
    owner.resize(candidates.size(), i);
  }
  std::vector<const Position*> batch;
  batch.reserve(candidates.size());
  for (const Position& c : candidates) batch.push_back(&c);
  std::vector<float> probs(batch.size() * encode::MOVE_INDICES, 0.0f);
  predict(batch, probs);
  // Each position moves to its worst-scored neighbour, even one the net gets less wrong than
  // the position itself (steepest ascent that walks on, as evaluate's search does: a climb that
  // stayed at a local maximum found few mistakes once the net had learnt its neighbourhood).
  std::vector<int> best(n, -1);
  std::vector<double> margin(n, -1);
  for (size_t c = 0; c < candidates.size(); ++c) {
    const double m = eval::worst_margin(candidates[c], probs.data() + c * encode::MOVE_INDICES);
    if (m > margin[owner[c]]) margin[owner[c]] = m, best[owner[c]] = int(c);
  }
  size_t wrong = 0;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    pool_[i] = std::move(candidates[size_t(best[i])]);
    sum += margin[i];
    wrong += margin[i] >= 0.5;  // an illegal move at or above 0.5, or a legal one below
  }
  figures_ = {figures_.refreshes + 1, n ? double(wrong) / double(n) : 0, n ? sum / double(n) : 0};
}

std::vector<const chess::Position*> HardPositions::draw(int64_t step, int rank, int k) const {
  GameRng rng(options_.seed ^ uint64_t(step), DRAW_STREAM | uint64_t(rank));
  std::vector<const chess::Position*> rows;
  for (int i = 0; i < k && !pool_.empty(); ++i) rows.push_back(&pool_[rng.below(uint32_t(pool_.size()))]);
  return rows;
}

std::string HardPositions::text() const {
  std::string text;
  for (const Position& p : pool_) text.append(p.fen()).append("\n");
  return text;
}

void HardPositions::restore(std::string_view text, const std::string& where) {
  std::vector<Position> pool;
  size_t line = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view fen = text.substr(0, end);
    ++line;
    try {
      pool.push_back(normalized(Position(fen)));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: mined position {}: {}", where, line, e.what()));
    }
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  if (pool.size() != size_t(options_.pool))
    throw Error(
        fmt::format("{}: {} mined positions, where --mine-pool asks for {}", where, pool.size(), options_.pool));
  pool_ = std::move(pool);
}

}  // namespace legalnet::run
