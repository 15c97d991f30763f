// Games played by sampling a model's moves, many at once so inference runs in batches.
// The model is behind a plain callback, so this needs no torch (and tests can fake a model).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "chess/movegen.h"
#include "chess/position.h"
#include "eval/anatomy.h"
#include "util/stats.h"

namespace legalnet::eval {

// Fills probs[i * 4096 ..] with the model's move probabilities (sigmoid outputs) for positions[i].
using Predictor = std::function<void(const std::vector<const chess::Position*>& positions, std::vector<float>& probs)>;

// Who the model plays. A uniform random mover; itself, on both sides; or an adversary that hunts
// for its mistakes (Balogh & Jelasity's illegal-move oracle): of its legal moves it plays the one
// after which the model puts the most mass on illegal moves (the first such in generation order),
// every reply of every game at that turn scored in one batch; a reply that ends the game only
// where every reply does.
enum class Opponent { RANDOM, SELF, ADVERSARY };

struct GameOptions {
  int games = 100;
  uint64_t seed = 0;
  bool greedy = false;  // the highest-scoring move instead of sampling
  Opponent opponent = Opponent::RANDOM;
  bool resample_illegal = true;  // after an illegal pick, sample again among legal moves and go on
  int max_plies = 0;             // 0: play to the end by the rules
  int concurrent = 256;          // games advanced together (the inference batch)
  // Told of each illegal pick: the position, the game's index, its plies so far, the index
  // picked and the model's probabilities (the gallery of mistakes listens here).
  std::function<void(const chess::Position&, int game, int ply, int index, const float* probs)> on_illegal_pick;
};

struct GameRecordStats {
  int plies = 0;                 // plies of the whole game
  int plies_before_illegal = 0;  // the predecessor's figure: all plies before the first illegal pick
  bool had_illegal = false;
  int model_picks = 0, illegal_picks = 0;
  // The same while the model's side is in check, where the rules bite hardest: a net that
  // misses a check from afar picks moves that ignore it.
  int picks_in_check = 0, illegal_in_check = 0;
  // The illegal picks by why they are illegal (anatomy.h's reasons).
  std::array<int, REASON_NB> illegal_by_reason{};
  int model_result = 0;     // +1 model won, 0 draw, -1 lost (model as white when self-play)
  int adversary_moves = 0;  // the adversary's moves after which the game goes on, and the
                            // model's illegal mass after them
  double adversary_mass = 0;
  bool natural_end = false;  // ended by the rules (not by max_plies)
};

struct GamesSummary {
  std::vector<GameRecordStats> games;
  double mean_plies_before_illegal() const;
  // A 95% interval of that mean from the spread over games (normal approximation; games are
  // independent draws), so that runs and models are compared with their noise.
  std::pair<double, double> mean_plies_interval() const;
  // Clean games: those that end by the rules with no illegal pick, out of all games. With a
  // model that rarely errs this is the headline: the mean plies above is then mostly game length.
  Proportion clean_games() const;
  // Illegal picks per model pick: overall, while the model's side is in check, and not in check.
  Proportion illegal_picks() const;
  Proportion illegal_picks_in_check() const;
  Proportion illegal_picks_not_in_check() const;
  // A 95% interval of the illegal rate per pick with games, not picks, as the independent draws:
  // an adversary that finds a blind spot keeps the net in it, so one game can hold most of a
  // run's picks and the Wilson interval over picks is too narrow. The ratio's spread over games
  // (normal approximation), never narrower than the Wilson interval (which holds for 0 picks).
  std::pair<double, double> illegal_rate_interval_over_games() const;
  // The game with the most illegal picks (the first of them), its index in `games`; none when no
  // game had one.
  std::optional<size_t> worst_game() const;
  // The illegal picks by reason (anatomy.h's FalsePositiveReason: KING_SAFETY, those that leave
  // or put the own king in check).
  std::array<uint64_t, REASON_NB> illegal_by_reason() const;
  // The model's mean illegal mass in the positions the adversary steered it to, the game going on
  // (0 without one).
  double mean_adversary_mass() const;
  int wins = 0, draws = 0, losses = 0;
  double seconds = 0;
};

// Plays the games. Deterministic from options.seed: each game draws its colour, the random
// mover's moves and its samples from GameRng(seed, game index); the adversary draws nothing.
GamesSummary play_games(const Predictor& predict, const GameOptions& options);

// The move a probability vector picks: sampled in proportion (the predecessor's multinomial
// over sigmoid outputs) or the maximum. Returns an index 0..4095, one with a positive weight
// when there is one: NaN, infinite and negative values weigh nothing.
int pick_index(const float* probs, bool greedy, double uniform);

// The legal move an index stands for (a queen for a promotion: the from-to index has no
// piece), or Move::none() when the index is not a legal move.
chess::Move legal_move_for(const chess::MoveList& legal, int index);

// The move after an illegal pick: drawn again among the legal moves only, in proportion to
// probs[4096] (board order), or the most probable legal move when greedy. `legal` is not empty.
chess::Move pick_legal_move(const chess::MoveList& legal, const float* probs, bool greedy, double uniform);

}  // namespace legalnet::eval
