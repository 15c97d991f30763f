#include "run/evaluate/games_pass.h"

#include <fmt/core.h>

#include <algorithm>

namespace legalnet::run {

eval::GamesSummary play_evaluation_games(const EvaluatedNet& net, const EvaluateOptions& o, eval::Opponent opponent,
                                         int games, eval::Gallery& gallery) {
  eval::GameOptions g;
  g.games = games;
  g.seed = o.seed;
  g.greedy = o.greedy;
  g.opponent = opponent;
  g.resample_illegal = o.resample_illegal;
  g.max_plies = o.max_plies;
  // The adversary scores every reply: a batch of its games' turns is ~30 times as many positions.
  const int batch = opponent == eval::Opponent::ADVERSARY ? std::max(1, o.batch_size / 32) : o.batch_size;
  g.concurrent = std::max(1, std::min(batch, games));
  const char* against = choice_of(OPPONENTS, opponent).name;
  g.on_illegal_pick = [&gallery, against](const chess::Position& pos, int game, int ply, int index,
                                          const float* probs) {
    gallery.add_illegal_pick(pos, index, probs, fmt::format("game {} vs {}, ply {}", game + 1, against, ply + 1));
  };
  return eval::play_games([&](const std::vector<const chess::Position*>& positions,
                              std::vector<float>& probs) { probs = net.predict(positions); },
                          g);
}

}  // namespace legalnet::run
