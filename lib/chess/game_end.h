// When a game is over, with python-chess's Board.outcome() semantics (claim_draw=False),
// so that our random games end exactly where the predecessor's did.
#pragma once

#include <string_view>

#include "chess/position.h"

namespace legalnet::chess {

// How a game ended. NONE: it goes on. The order is python-chess's order of precedence.
enum class Termination : uint8_t {
  NONE,
  CHECKMATE,
  INSUFFICIENT_MATERIAL,
  STALEMATE,
  SEVENTYFIVE_MOVES,
  FIVEFOLD_REPETITION,
};
constexpr int TERMINATION_NB = 6;

// Lower-case words for PGN tags, summaries and datasets ("checkmate", "fivefold repetition").
std::string_view termination_name(Termination t);

// Whether colour c lacks the material to ever mate (python-chess's has_insufficient_material:
// a lone king, a king and one knight against no pawns/knights/bishops/rooks, or bishops all on
// one square colour with no pawns or knights on the board).
bool has_insufficient_material(const Position& pos, Color c);
// Neither side can mate: K v K, K+minor v K, and bishops all on one square colour.
bool is_insufficient_material(const Position& pos);

// How many times the current position has occurred (itself included) since the position was
// set, comparing placement, side to move, castling rights and a legal en-passant square.
int repetition_count(const Position& pos);

// Why the game is over, or NONE. legal_moves is the number of legal moves in pos (the caller
// usually has them). Checkmate beats everything, then insufficient material, stalemate, the
// seventy-five-move rule (halfmove clock >= 150) and fivefold repetition, as in python-chess.
Termination termination(const Position& pos, int legal_moves);
Termination termination(const Position& pos);

// Draws a player may claim but that do not end the game by themselves.
inline bool can_claim_fifty_moves(const Position& pos) { return pos.halfmove_clock() >= 100; }
inline bool is_threefold_repetition(const Position& pos) { return repetition_count(pos) >= 3; }

// The PGN result of a game that ended this way with `side_to_move` to move at the end
// ("1-0", "0-1" or "1/2-1/2").
std::string_view result_string(Termination t, Color side_to_move);

}  // namespace legalnet::chess
