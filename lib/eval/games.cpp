#include "eval/games.h"

#include <algorithm>
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

std::pair<double, double> GamesSummary::illegal_rate_interval_over_games() const {
  const Proportion all = illegal_picks();
  const auto [wilson_low, wilson_high] = all.interval();
  const double n = double(games.size());
  if (n < 2 || all.total == 0) return {wilson_low, wilson_high};
  const double rate = all.value();
  double squares = 0;  // the residuals of each game's picks from the pooled rate
  for (const auto& g : games) {
    const double residual = double(g.illegal_picks) - rate * double(g.model_picks);
    squares += residual * residual;
  }
  const double half = 1.96 * std::sqrt(n / (n - 1) * squares) / double(all.total);
  return {std::max(0.0, std::min(wilson_low, rate - half)), std::min(1.0, std::max(wilson_high, rate + half))};
}

std::optional<size_t> GamesSummary::worst_game() const {
  std::optional<size_t> worst;
  for (size_t i = 0; i < games.size(); ++i)
    if (games[i].illegal_picks > 0 && (!worst || games[i].illegal_picks > games[*worst].illegal_picks)) worst = i;
  return worst;
}

double GamesSummary::mean_adversary_mass() const {
  double mass = 0;
  int moves = 0;
  for (const auto& g : games) mass += g.adversary_mass, moves += g.adversary_moves;
  return moves ? mass / moves : 0.0;
}

std::array<uint64_t, REASON_NB> GamesSummary::illegal_by_reason() const {
  std::array<uint64_t, REASON_NB> n{};
  for (const auto& g : games)
    for (size_t r = 0; r < n.size(); ++r) n[r] += uint64_t(g.illegal_by_reason[r]);
  return n;
}

namespace {

// Plays `g` on without the model (the random mover's turns) until the model or the adversary is
// to move or the game is over; true when a move is to be chosen by a net's probabilities.
bool advance_to_net(LiveGame& g, const GameOptions& o) {
  const bool self_play = o.opponent == Opponent::SELF;
  while (!g.over) {
    const MoveList legal(g.pos);
    const Termination t = termination(g.pos, legal.size());
    if (t != Termination::NONE || (o.max_plies && g.stats.plies >= o.max_plies)) {
      g.over = true;
      g.stats.natural_end = t != Termination::NONE;
      if (!g.stats.had_illegal) g.stats.plies_before_illegal = g.stats.plies;
      if (t == Termination::CHECKMATE)
        g.stats.model_result = g.pos.side_to_move() == (self_play ? WHITE : g.model_color) ? -1 : 1;
      return false;
    }
    if (self_play || o.opponent == Opponent::ADVERSARY || g.pos.side_to_move() == g.model_color) return true;
    g.pos.do_move(legal[int(g.rng.below(uint32_t(legal.size())))]);
    ++g.stats.plies;
  }
  return false;
}

bool model_to_move(const LiveGame& g, const GameOptions& o) {
  return o.opponent == Opponent::SELF || g.pos.side_to_move() == g.model_color;
}

// The adversary's turn in each of `games`: every legal reply's position scored in one batch,
// and in each game the reply after which the model's illegal mass is highest played. A reply
// that ends the game (a mate, a stalemate, a draw by the rules) leaves the model no pick: it
// scores below every reply that goes on, so the adversary never ends a game it can go on hunting
// in (a mate's illegal mass is all of it, and a net that is mated cannot err).
void play_adversary_moves(const std::vector<LiveGame*>& games, const Predictor& predict) {
  std::vector<Position> children;
  std::vector<encode::LegalMask> legal;  // each child's legal moves, from one generation
  std::vector<bool> ends;
  std::vector<std::vector<Move>> replies(games.size());
  for (size_t i = 0; i < games.size(); ++i) {
    Position& pos = games[i]->pos;
    for (Move m : MoveList(pos)) {
      replies[i].push_back(m);
      pos.do_move(m);
      const MoveList moves(pos);
      children.emplace_back(pos.fen());  // the board alone: the model sees no history
      legal.emplace_back(moves);
      ends.push_back(termination(pos, moves.size()) != Termination::NONE);  // repetitions by the game's history
      pos.undo_move(m);
    }
  }
  std::vector<const Position*> batch;
  for (const auto& c : children) batch.push_back(&c);
  std::vector<float> probs(batch.size() * encode::MOVE_INDICES, 0.0f);
  predict(batch, probs);
  size_t child = 0;
  for (size_t i = 0; i < games.size(); ++i) {
    double worst = -2;
    Move pick = replies[i][0];
    for (Move m : replies[i]) {
      double mass = ends[child] ? -1 : encode::illegal_share(probs.data() + child * encode::MOVE_INDICES, legal[child]);
      if (std::isnan(mass)) mass = 0;  // a net whose outputs overflow: a reply like any other
      if (mass > worst) worst = mass, pick = m;
      ++child;
    }
    LiveGame& g = *games[i];
    g.pos.do_move(pick);
    ++g.stats.plies;
    if (worst < 0) continue;  // every reply ended the game
    ++g.stats.adversary_moves;
    g.stats.adversary_mass += worst;
  }
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
    ++g.stats.illegal_by_reason[size_t(reason_illegal(g.pos, picked))];
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

// Games [first, first + live.size()) to their ends: at each turn the adversary's moves of all
// games in one batch, then the model's picks of all of them in another.
void play_batch(std::vector<LiveGame>& live, const Predictor& predict, const GameOptions& o) {
  std::vector<const Position*> batch;
  std::vector<LiveGame*> owners, adversary;
  std::vector<float> probs;
  for (;;) {
    batch.clear();
    owners.clear();
    adversary.clear();
    for (auto& g : live)
      if (advance_to_net(g, o)) {
        if (!model_to_move(g, o)) {
          adversary.push_back(&g);
          continue;
        }
        batch.push_back(&g.pos);
        owners.push_back(&g);
      }
    if (batch.empty() && adversary.empty()) return;
    if (!adversary.empty()) play_adversary_moves(adversary, predict);
    if (batch.empty()) continue;
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
