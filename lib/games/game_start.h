// Where the games of a run start: the standard position (or one FEN), a random legal placement
// of material for each game, or the records of a FEN/EPD list in turn.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chess/position.h"
#include "util/rng.h"

namespace legalnet {

class GameStarts {
 public:
  // `start` is "random" (random games from the standard start, or from `fen` when it is not
  // empty), "placement" (each game from random_placement), "sparse" (from random_sparse_position:
  // the kings and one to three pieces), "edited" (from random_edited_position: a random game's
  // position after a few legal edits), "lopsided" (from random_lopsided_position: a side with
  // little against one with much) or the path of a FEN/EPD list (game i from record i mod the
  // list's size). Throws legalnet::Error on a bad FEN or list.
  GameStarts(const std::string& start, const std::string& fen);

  // Whether `start` names a kind of start (random, placement, sparse, edited, lopsided), not a FEN/EPD list.
  static bool is_keyword(const std::string& start);

  // The start of game `index`; a placement is drawn from the game's own stream `rng` first.
  chess::Position position(uint64_t index, GameRng& rng) const;
  // Whether games need the SetUp and FEN tags (they do not start from the standard position).
  bool set_up() const { return set_up_; }

 private:
  chess::Position (*draw_)(GameRng&) = nullptr;  // a start drawn from each game's stream, or none
  bool set_up_ = false;
  std::optional<chess::Position> fixed_;
  std::vector<std::string> list_;  // canonical FENs
};

}  // namespace legalnet
