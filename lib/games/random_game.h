// Random games: every move drawn uniformly from the legal moves until the game is over.
#pragma once

#include <vector>

#include "chess/game_end.h"
#include "chess/position.h"
#include "util/rng.h"

namespace legalnet {

// A played game: where it started, its moves, and how it ended.
struct GameRecord {
  uint64_t index = 0;  // position in the run, 0-based (the PGN Round tag)
  std::vector<chess::Move> moves;
  chess::Termination termination = chess::Termination::NONE;  // NONE when cut by max_plies
  chess::Color final_side_to_move = chess::WHITE;
};

// Plays one random game from `start`, drawing from rng; stops after max_plies plies
// (0: no limit) with termination NONE when the rules have not ended it by then.
GameRecord play_random_game(const chess::Position& start, GameRng& rng, int max_plies);

}  // namespace legalnet
