#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "chess/movegen.h"
#include "chess/notation.h"
#include "games/random_game.h"

namespace legalnet {
namespace {

using namespace chess;

TEST(KingPressure, CountsCheckersPinsAndAttackedSquaresBesideTheKing) {
  EXPECT_EQ(king_pressure(Position()), 0);
  // A rook checks from e2: 8 for the checker, 1 each for d2 and f2 (the king lifted, d1 and f1 stay free).
  EXPECT_EQ(king_pressure(Position("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1")), 8 + 2);
  // A bishop on b4 pins the knight on d2 to the king on e1: 2, and d2 itself, beside the king,
  // is a square the bishop attacks (defended squares count, whoever stands there): 1.
  EXPECT_EQ(king_pressure(Position("4k3/8/8/8/1b6/8/3N4/4K3 w - - 0 1")), 2 + 1);
  // Double check (the knight on d3, the rook on e8): 16; beside the king the rook's file gives e2
  // and the knight f2 (python-chess agrees on all three: tests/chess/python_chess_diff.py).
  EXPECT_EQ(king_pressure(Position("k3r3/8/8/8/8/3n4/8/4K3 w - - 0 1")), 16 + 2);
}

// A game's moves, as text, and how many of its plies gave check.
struct Played {
  std::string moves;
  int checks = 0;
  int plies = 0;
};

std::string uci_moves(const GameRecord& record) {
  std::string s;
  for (const Move m : record.moves) s += to_uci(m) + " ";
  return s;
}

Played play(uint64_t seed, uint64_t game, double pressure) {
  GameRng rng(seed, game);
  const GameRecord record = play_random_game(Position(), rng, 60, pressure);
  Played p{uci_moves(record)};
  Position pos;
  for (const Move m : record.moves) {
    pos.do_move(m);
    p.checks += pos.in_check();
    ++p.plies;
  }
  return p;
}

TEST(PressureMover, EveryPressingPlyTakesTheHighestPressureAndGamesRepeat) {
  // Pressure 1: every ply is a move after which no legal move would have pressed harder.
  for (uint64_t game = 0; game < 20; ++game) {
    GameRng rng(7, game);
    const GameRecord record = play_random_game(Position(), rng, 40, 1.0);
    Position pos;
    for (const Move played : record.moves) {
      const MoveList legal(pos);
      int best = -1, after_played = -1;
      for (const Move m : legal) {
        pos.do_move(m);
        best = std::max(best, king_pressure(pos));
        if (m == played) after_played = king_pressure(pos);
        pos.undo_move(m);
      }
      ASSERT_NE(after_played, -1) << "an illegal move in game " << game;
      ASSERT_EQ(after_played, best) << "game " << game << ", ply " << pos.history().size();
      pos.do_move(played);
    }
  }
  EXPECT_EQ(play(7, 3, 0.5).moves, play(7, 3, 0.5).moves);
  EXPECT_NE(play(7, 3, 0.5).moves, play(7, 4, 0.5).moves);
}

TEST(PressureMover, PressureZeroIsTheUniformGameAndPressureGivesChecks) {
  int uniform_checks = 0, uniform_plies = 0, pressed_checks = 0, pressed_plies = 0;
  for (uint64_t game = 0; game < 50; ++game) {
    GameRng rng(3, game);
    EXPECT_EQ(play(3, game, 0.0).moves, uci_moves(play_random_game(Position(), rng, 60)));
    const Played uniform = play(3, game, 0.0), pressed = play(3, game, 0.5);
    uniform_checks += uniform.checks;
    uniform_plies += uniform.plies;
    pressed_checks += pressed.checks;
    pressed_plies += pressed.plies;
  }
  // About one ply in 30 gives check in uniform games from the start; half the plies pressing
  // give check several times as often (measured: seeds fixed, so this is not a flaky bound).
  EXPECT_GT(double(pressed_checks) / pressed_plies, 3.0 * uniform_checks / uniform_plies);
}

}  // namespace
}  // namespace legalnet
