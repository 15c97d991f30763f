#include "eval/games.h"

#include <chrono>
#include <cmath>

#include "chess/game_end.h"
#include "chess/movegen.h"
#include "encode/encode.h"
#include "eval/anatomy.h"
#include "util/rng.h"

namespace legalnet::eval {

using namespace chess;

namespace {

// A probability as a weight: NaN, infinities and negatives count as 0 (a net that overflows
// must not steer the pick out of the vector, nor onto an index it gave no weight).
double weight(float p) { return std::isfinite(p) && p > 0 ? double(p) : 0.0; }

}  // namespace

int pick_index(const float* probs, bool greedy, double uniform) {
  int best = 0;
  if (greedy) {
    for (int i = 1; i < encode::MOVE_INDICES; ++i)
      if (weight(probs[i]) > weight(probs[best])) best = i;
    return best;
  }
  double total = 0;
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    total += weight(probs[i]);
    if (weight(probs[i]) > 0) best = i;  // the last with weight: where rounding ends the walk
  }
  double target = uniform * total;
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    target -= weight(probs[i]);
    if (target < 0) return i;
  }
  return best;
}

Move legal_move_for(const MoveList& legal, int index) {
  for (Move m : legal)
    if (encode::move_index(m) == index && (m.kind() != chess::MoveKind::PROMOTION || m.promotion() == QUEEN)) return m;
  return Move::none();
}

Move pick_legal_move(const MoveList& legal, const float* probs, bool greedy, double uniform) {
  // Every legal move keeps a weight, whatever the net gave it (NaN included), so that an index
  // with weight, a legal move, is always picked.
  std::vector<float> legal_probs(encode::MOVE_INDICES, 0.0f);
  for (Move m : legal)
    legal_probs[size_t(encode::move_index(m))] = float(weight(probs[encode::move_index(m)])) + 1e-12f;
  const Move m = legal_move_for(legal, pick_index(legal_probs.data(), greedy, uniform));
  return m.is_none() ? legal[0] : m;  // unreachable: pick_index returns an index with weight
}

namespace {

struct LiveGame {
  Position pos;
  GameRng rng;
  Color model_color = WHITE;
  GameRecordStats stats;
  bool over = false;
  int number;  // 0-based index of the game in the run
  LiveGame(uint64_t seed, uint64_t index) : rng(seed, index), number(int(index)) {}
};

}  // namespace

double GamesSummary::mean_plies_before_illegal() const {
  double sum = 0;
  for (const auto& g : games) sum += g.plies_before_illegal;
  return games.empty() ? 0.0 : sum / double(games.size());
}

std::pair<double, double> GamesSummary::mean_plies_interval() const {
  const double n = double(games.size()), mean = mean_plies_before_illegal();
  if (n < 2) return {mean, mean};
  double squares = 0;
  for (const auto& g : games) squares += (g.plies_before_illegal - mean) * (g.plies_before_illegal - mean);
  const double half = 1.96 * std::sqrt(squares / (n - 1) / n);
  return {mean - half, mean + half};
}

Proportion GamesSummary::clean_games() const {
  Proportion p{0, games.size()};
  for (const auto& g : games) p.count += !g.had_illegal && g.natural_end;
  return p;
}

Proportion GamesSummary::illegal_picks() const {
  Proportion p;
  for (const auto& g : games) p.count += uint64_t(g.illegal_picks), p.total += uint64_t(g.model_picks);
  return p;
}

Proportion GamesSummary::illegal_picks_in_check() const {
  Proportion p;
  for (const auto& g : games) p.count += uint64_t(g.illegal_in_check), p.total += uint64_t(g.picks_in_check);
  return p;
}

Proportion GamesSummary::illegal_picks_not_in_check() const {
  const Proportion all = illegal_picks(), in_check = illegal_picks_in_check();
  return {all.count - in_check.count, all.total - in_check.total};
}

uint64_t GamesSummary::illegal_king_safety() const {
  uint64_t n = 0;
  for (const auto& g : games) n += uint64_t(g.illegal_king_safety);
  return n;
}

namespace {

// Plays `g` on without the model (the random mover's turns) until the model is to move or the
// game is over; true when the model is to move.
bool advance_to_model(LiveGame& g, const GameOptions& o) {
  while (!g.over) {
    const MoveList legal(g.pos);
    const Termination t = termination(g.pos, legal.size());
    if (t != Termination::NONE || (o.max_plies && g.stats.plies >= o.max_plies)) {
      g.over = true;
      g.stats.natural_end = t != Termination::NONE;
      if (!g.stats.had_illegal) g.stats.plies_before_illegal = g.stats.plies;
      if (t == Termination::CHECKMATE)
        g.stats.model_result = g.pos.side_to_move() == (o.self_play ? WHITE : g.model_color) ? -1 : 1;
      return false;
    }
    if (o.self_play || g.pos.side_to_move() == g.model_color) return true;
    g.pos.do_move(legal[int(g.rng.below(uint32_t(legal.size())))]);
    ++g.stats.plies;
  }
  return false;
}

// The model's pick `p` (its probabilities over the move indices) played in `g`: an illegal one
// is counted, then ends the game or is resampled among the legal moves.
void play_pick(LiveGame& g, const float* p, const GameOptions& o) {
  const MoveList legal(g.pos);
  const bool in_check = g.pos.in_check();
  ++g.stats.model_picks;
  g.stats.picks_in_check += in_check;
  const int picked = pick_index(p, o.greedy, g.rng.uniform());
  Move m = legal_move_for(legal, picked);
  if (m.is_none()) {
    if (o.on_illegal_pick) o.on_illegal_pick(g.pos, g.number, g.stats.plies, picked, p);
    ++g.stats.illegal_picks;
    g.stats.illegal_in_check += in_check;
    g.stats.illegal_king_safety += reason_illegal(g.pos, picked) == KING_SAFETY;
    if (!g.stats.had_illegal) {
      g.stats.had_illegal = true;
      g.stats.plies_before_illegal = g.stats.plies;
    }
    if (!o.resample_illegal) {
      g.over = true;
      return;
    }
    m = pick_legal_move(legal, p, o.greedy, g.rng.uniform());
  }
  g.pos.do_move(m);
  ++g.stats.plies;
}

// Games [first, first + live.size()) to their ends, the model's turns of all of them in one batch.
void play_batch(std::vector<LiveGame>& live, const Predictor& predict, const GameOptions& o) {
  std::vector<const Position*> batch;
  std::vector<LiveGame*> owners;
  std::vector<float> probs;
  for (;;) {
    batch.clear();
    owners.clear();
    for (auto& g : live)
      if (advance_to_model(g, o)) {
        batch.push_back(&g.pos);
        owners.push_back(&g);
      }
    if (batch.empty()) return;
    probs.assign(batch.size() * encode::MOVE_INDICES, 0.0f);
    predict(batch, probs);
    for (size_t i = 0; i < owners.size(); ++i) play_pick(*owners[i], probs.data() + i * encode::MOVE_INDICES, o);
  }
}

}  // namespace

GamesSummary play_games(const Predictor& predict, const GameOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  GamesSummary summary;
  summary.games.resize(size_t(o.games));
  for (int first = 0; first < o.games; first += o.concurrent) {
    std::vector<LiveGame> live;
    for (int g = first; g < std::min(o.games, first + o.concurrent); ++g) {
      live.emplace_back(o.seed, uint64_t(g));
      live.back().model_color = live.back().rng.below(2) ? BLACK : WHITE;
    }
    play_batch(live, predict, o);
    for (size_t i = 0; i < live.size(); ++i) summary.games[size_t(first) + i] = live[i].stats;
  }
  for (const auto& g : summary.games) {
    if (!g.natural_end || (g.had_illegal && !o.resample_illegal)) continue;
    if (g.model_result > 0)
      ++summary.wins;
    else if (g.model_result < 0)
      ++summary.losses;
    else
      ++summary.draws;
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace legalnet::eval
