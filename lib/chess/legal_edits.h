// Edits that keep a position legal: a piece moved, added, removed or two swapped, the castling
// rights, en passant, the side to move. What evaluate's position search steps by (eval/
// position_search.h), and what gen_moves --start edited draws its starts with.
#pragma once

#include <optional>

#include "chess/position.h"
#include "util/rng.h"

namespace legalnet::chess {

// One random legal edit of pos (nullopt when 64 draws found none), from rng. Castling rights and
// en passant only where they hold; kings are moved, never removed; the result is a legal
// position (possible_position) other than pos.
std::optional<Position> random_edit(const Position& pos, GameRng& rng);

}  // namespace legalnet::chess
