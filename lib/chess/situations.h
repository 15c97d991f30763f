// What kind of position: the situations that exercise each rule (in check, double check, pins,
// en passant, castling allowed or refused, promotion, many queens, no legal move), computed once
// per position from the move list and the king's safety. The report card counts by them
// (eval/situations.h) and training weights its rows by them (train/training_data.h): a new
// situation is one row here and its predicate in situations_of.
#pragma once

#include <cstdint>

#include "chess/movegen.h"

namespace legalnet::chess {

// Situations a position can be in (one position can be in several). WITH_LEGAL_MOVE holds every
// position but those with no legal move, which NO_LEGAL_MOVE holds.
enum Situation : int {
  WITH_LEGAL_MOVE,
  SIT_IN_CHECK,
  SIT_DOUBLE_CHECK,
  SIT_PINNED_PIECE,      // a piece of the side to move is pinned to its king
  SIT_EN_PASSANT,        // an en-passant capture is legal
  SIT_CASTLING,          // a castling move is legal
  SIT_CASTLING_REFUSED,  // a castling right with the way clear, refused because a square is attacked
  SIT_PROMOTION,         // a promotion is legal
  SIT_MANY_QUEENS,       // three or more queens on the board
  SIT_NO_LEGAL_MOVE,     // checkmate or stalemate: the net should put no mass anywhere
  SITUATION_NB
};
static_assert(SITUATION_NB <= 16, "a row's situations are 16 bits (train::CompactPositions)");
const char* situation_name(int situation);

// The situations of pos (bit i set for Situation i), from its legal moves.
uint32_t situations_of(const Position& pos, const MoveList& legal);

}  // namespace legalnet::chess
