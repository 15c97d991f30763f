#include "run/evaluate/games_pass.h"

#include <fmt/core.h>

#include <algorithm>

namespace legalnet::run {

eval::GamesSummary play_evaluation_games(const EvaluatedNet& net, const EvaluateOptions& o, eval::Gallery& gallery) {
  eval::GameOptions g;
  g.games = o.games;
  g.seed = o.seed;
  g.greedy = o.greedy;
  g.self_play = o.opponent == Opponent::SELF;
  g.resample_illegal = o.resample_illegal;
  g.max_plies = o.max_plies;
  g.concurrent = std::max(1, std::min(o.batch_size, o.games));
  g.on_illegal_pick = [&](const chess::Position& pos, int game, int ply, int index, const float* probs) {
    gallery.add_illegal_pick(pos, index, probs, fmt::format("game {}, ply {}", game + 1, ply + 1));
  };
  return eval::play_games(
      [&](const std::vector<const chess::Position*>& positions, std::vector<float>& probs) {
        probs = net.predict(positions);
      },
      g);
}

}  // namespace legalnet::run
