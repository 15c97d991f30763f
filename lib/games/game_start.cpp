#include "games/game_start.h"

#include <algorithm>
#include <iterator>

#include "games/edited_start.h"
#include "games/material_class.h"
#include "games/placement.h"
#include "games/position_list.h"
#include "util/error.h"

namespace legalnet {

namespace {

// The kinds of start drawn from a game's stream, by their --start keyword.
struct DrawnStart {
  const char* keyword;
  chess::Position (*draw)(GameRng&);
};
constexpr DrawnStart DRAWN_STARTS[] = {{"placement", random_placement},
                                       {"sparse", random_sparse_position},
                                       {"edited", random_edited_position},
                                       {"lopsided", random_lopsided_position}};

}  // namespace

GameStarts::GameStarts(const std::string& start, const std::string& fen) {
  if (start != "random" && !fen.empty()) throw Error("--start-fen goes with --start random only");
  if (start == "random") {
    fixed_.emplace(fen.empty() ? chess::START_FEN : std::string_view(fen));
    set_up_ = !fen.empty();
    return;
  }
  set_up_ = true;
  for (const DrawnStart& kind : DRAWN_STARTS)
    if (start == kind.keyword) draw_ = kind.draw;
  if (!draw_) list_ = read_position_list(start);
}

bool GameStarts::is_keyword(const std::string& start) {
  return start == "random" || std::any_of(std::begin(DRAWN_STARTS), std::end(DRAWN_STARTS),
                                          [&](const DrawnStart& k) { return start == k.keyword; });
}

chess::Position GameStarts::position(uint64_t index, GameRng& rng) const {
  if (draw_) return draw_(rng);
  if (fixed_) return *fixed_;
  return chess::Position(list_[index % list_.size()]);
}

}  // namespace legalnet
