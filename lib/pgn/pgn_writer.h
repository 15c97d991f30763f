// PGN export of played games: tag pairs, SAN movetext with move numbers, 80-column lines.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "chess/position.h"

namespace legalnet {

using PgnTags = std::vector<std::pair<std::string, std::string>>;

// Appends one game to `out`: the tags in the given order, a blank line, the movetext with
// its result token, and a blank line. The moves are replayed from `start` to write SAN.
// The Result tag must be among the tags; the result token repeats it.
void append_pgn_game(const chess::Position& start, const std::vector<chess::Move>& moves, const PgnTags& tags,
                     std::string& out);

// A tag value with backslashes and quotes escaped as PGN requires.
std::string pgn_escape(std::string_view value);

}  // namespace legalnet
