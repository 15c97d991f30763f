// What kind of position: the situations that exercise each rule (in check, double check, pins,
// en passant, castling allowed or refused, promotion, many queens, few legal moves, no legal
// move), computed once per position from the move list and the king's safety. The report card
// counts by them (eval/situations.h) and training weights its rows by them (train/training_data.h,
// train --situation-weight NAME=W): a new situation is its enum row and its row in SITUATIONS
// here, and its predicate in situations_of; the report card and the weights follow with no other
// edit.
#pragma once

#include <array>
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
  SIT_FEW_MOVES,         // one to FEW_MOVES legal moves: where a little mass on illegal moves is a
                         // large share of what a sampled pick draws from (the hunting adversary's
                         // positions: a side with little left, a king hemmed in)
  SIT_NO_LEGAL_MOVE,     // checkmate or stalemate: the net should put no mass anywhere
  SITUATION_NB
};
static_assert(SITUATION_NB <= 16, "a row's situations are 16 bits (train::CompactPositions)");
inline constexpr int FEW_MOVES = 5;

// Each situation's names, in the enum's order (a choice table, util/choices.h): `name` is the
// command line's (train --situation-weight many_queens=4), `label` the report card's (report.json's
// keys, the terminal table, TensorBoard's tags).
struct SituationSpec {
  Situation value;
  const char* name;
  const char* label;
};
inline constexpr std::array<SituationSpec, SITUATION_NB> SITUATIONS{{
    {WITH_LEGAL_MOVE, "with_legal_move", "with a legal move"},
    {SIT_IN_CHECK, "in_check", "in check"},
    {SIT_DOUBLE_CHECK, "double_check", "double check"},
    {SIT_PINNED_PIECE, "pinned_piece", "pinned piece"},
    {SIT_EN_PASSANT, "en_passant", "en passant available"},
    {SIT_CASTLING, "castling", "castling available"},
    {SIT_CASTLING_REFUSED, "castling_refused", "castling refused (attacked square)"},
    {SIT_PROMOTION, "promotion", "promotion"},
    {SIT_MANY_QUEENS, "many_queens", "three or more queens"},
    {SIT_FEW_MOVES, "few_moves", "one to five legal moves"},
    {SIT_NO_LEGAL_MOVE, "no_legal_move", "no legal move"},
}};
static_assert(
    [] {
      for (int s = 0; s < SITUATION_NB; ++s)
        if (SITUATIONS[size_t(s)].value != s || SITUATIONS[size_t(s)].name == nullptr) return false;
      return true;
    }(),
    "SITUATIONS has one row per Situation, in the enum's order");

// The report card's label of a situation ("three or more queens").
inline const char* situation_label(int situation) { return SITUATIONS[size_t(situation)].label; }

// The situations of pos (bit i set for Situation i), from its legal moves.
uint32_t situations_of(const Position& pos, const MoveList& legal);

}  // namespace legalnet::chess
