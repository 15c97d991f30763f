#include "games/game_start.h"

#include "games/edited_start.h"
#include "games/material_class.h"
#include "games/placement.h"
#include "games/position_list.h"
#include "util/error.h"

namespace legalnet {

GameStarts::GameStarts(const std::string& start, const std::string& fen) {
  if (start != "random" && !fen.empty()) throw Error("--start-fen goes with --start random only");
  if (start == "random") {
    fixed_.emplace(fen.empty() ? chess::START_FEN : std::string_view(fen));
    set_up_ = !fen.empty();
  } else if (start == "placement") {
    placement_ = set_up_ = true;
  } else if (start == "sparse") {
    sparse_ = set_up_ = true;
  } else if (start == "edited") {
    edited_ = set_up_ = true;
  } else if (start == "lopsided") {
    lopsided_ = set_up_ = true;
  } else {
    list_ = read_position_list(start);
    set_up_ = true;
  }
}

bool GameStarts::is_keyword(const std::string& start) {
  return start == "random" || start == "placement" || start == "sparse" || start == "edited" || start == "lopsided";
}

chess::Position GameStarts::position(uint64_t index, GameRng& rng) const {
  if (placement_) return random_placement(rng);
  if (sparse_) return random_sparse_position(rng);
  if (edited_) return random_edited_position(rng);
  if (lopsided_) return random_lopsided_position(rng);
  if (fixed_) return *fixed_;
  return chess::Position(list_[index % list_.size()]);
}

}  // namespace legalnet
