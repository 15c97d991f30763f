#include "games/random_game.h"

#include "chess/movegen.h"

namespace legalnet {

GameRecord play_random_game(const chess::Position& start, GameRng& rng, int max_plies) {
  chess::Position pos = start;
  GameRecord game;
  game.moves.reserve(512);
  for (;;) {
    const chess::MoveList legal(pos);
    game.termination = chess::termination(pos, legal.size());
    if (game.termination != chess::Termination::NONE) break;
    if (max_plies > 0 && int(game.moves.size()) >= max_plies) break;
    const chess::Move m = legal[int(rng.below(uint32_t(legal.size())))];
    pos.do_move(m);
    game.moves.push_back(m);
  }
  game.final_side_to_move = pos.side_to_move();
  return game;
}

}  // namespace legalnet
