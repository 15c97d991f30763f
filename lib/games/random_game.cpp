#include "games/random_game.h"

#include "chess/king_safety.h"
#include "chess/movegen.h"

namespace legalnet {

int king_pressure(const chess::Position& pos) {
  const chess::KingSafety safety = chess::king_safety(pos);
  const chess::Bitboard around = chess::king_attacks(pos.king_square(pos.side_to_move()));
  return 8 * chess::popcount(safety.checkers) + 2 * chess::popcount(safety.pinned) +
         chess::popcount(safety.danger & around);
}

namespace {

// Of the legal moves, one after which the opponent's king is pressed hardest, ties drawn from rng.
chess::Move pressing_move(chess::Position& pos, const chess::MoveList& legal, GameRng& rng) {
  int best = -1, ties = 0, chosen = 0;
  for (int i = 0; i < legal.size(); ++i) {
    pos.do_move(legal[i]);
    const int pressure = king_pressure(pos);
    pos.undo_move(legal[i]);
    if (pressure > best) {
      best = pressure;
      ties = 1;
      chosen = i;
    } else if (pressure == best && rng.below(uint32_t(++ties)) == 0) {
      chosen = i;  // reservoir sampling: each of the tied moves with probability 1 / ties
    }
  }
  return legal[chosen];
}

}  // namespace

GameRecord play_random_game(const chess::Position& start, GameRng& rng, int max_plies, double pressure) {
  chess::Position pos = start;
  GameRecord game;
  game.moves.reserve(512);
  for (;;) {
    const chess::MoveList legal(pos);
    game.termination = chess::termination(pos, legal.size());
    if (game.termination != chess::Termination::NONE) break;
    if (max_plies > 0 && int(game.moves.size()) >= max_plies) break;
    const bool press = pressure > 0 && rng.uniform() < pressure;
    const chess::Move m = press ? pressing_move(pos, legal, rng) : legal[int(rng.below(uint32_t(legal.size())))];
    pos.do_move(m);
    game.moves.push_back(m);
  }
  game.final_side_to_move = pos.side_to_move();
  return game;
}

}  // namespace legalnet
