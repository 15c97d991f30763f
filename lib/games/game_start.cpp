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
using Draw = chess::Position (*)(GameRng&);
struct DrawnStart {
  const char* keyword;
  Draw draw;
};
constexpr DrawnStart DRAWN_STARTS[] = {{"placement", random_placement},
                                       {"sparse", random_sparse_position},
                                       {"edited", random_edited_position},
                                       {"lopsided", random_lopsided_position}};

// The draw `start` names, or nullptr where it names none of DRAWN_STARTS.
Draw drawn_start(const std::string& start) {
  const auto* kind = std::find_if(std::begin(DRAWN_STARTS), std::end(DRAWN_STARTS),
                                  [&](const DrawnStart& k) { return start == k.keyword; });
  return kind == std::end(DRAWN_STARTS) ? nullptr : kind->draw;
}

}  // namespace

GameStarts::GameStarts(const std::string& start, const std::string& fen) {
  if (start != "random" && !fen.empty()) throw Error("--start-fen goes with --start random only");
  if (start == "random") {
    fixed_.emplace(fen.empty() ? chess::START_FEN : std::string_view(fen));
    set_up_ = !fen.empty();
    return;
  }
  set_up_ = true;
  draw_ = drawn_start(start);
  if (!draw_) list_ = read_position_list(start);
}

bool GameStarts::is_keyword(const std::string& start) { return start == "random" || drawn_start(start) != nullptr; }

chess::Position GameStarts::position(uint64_t index, GameRng& rng) const {
  if (draw_) return draw_(rng);
  if (fixed_) return *fixed_;
  return chess::Position(list_[index % list_.size()]);
}

}  // namespace legalnet
