// Random games: each move drawn uniformly from the legal moves until the game is over; or, with
// a pressure, some moves chosen to press the opponent's king (the positions where the rules of
// check and pins decide most of the legal set).
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

// How hard `pos` presses its side to move's king: 8 a checker, 2 a pinned piece, 1 a square
// next to the king that the opponent attacks. What the rules of king safety take away from a
// move list grows with it, and so does what a net that half knows them gets wrong there.
int king_pressure(const chess::Position& pos);

// Plays one game from `start`, drawing from rng; stops after max_plies plies (0: no limit) with
// termination NONE when the rules have not ended it by then. Each ply is uniform among the legal
// moves, except that with probability `pressure` (0 to 1) it plays a move after which
// king_pressure is highest (uniform among those). Pressure 0 draws exactly the uniform game.
GameRecord play_random_game(const chess::Position& start, GameRng& rng, int max_plies, double pressure = 0);

}  // namespace legalnet
