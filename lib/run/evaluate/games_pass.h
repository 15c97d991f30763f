// evaluate's games (--games, --adversary-games): the model against a random mover, itself or the
// adversary, its illegal picks into the gallery.
#pragma once

#include "eval/gallery.h"
#include "eval/games.h"
#include "run/evaluate/options.h"
#include "run/evaluate/prediction.h"

namespace legalnet::run {

eval::GamesSummary play_evaluation_games(const EvaluatedNet& net, const EvaluateOptions& options,
                                         eval::Opponent opponent, int games, eval::Gallery& gallery);

}  // namespace legalnet::run
