#include "chess/game_end.h"

#include "chess/movegen.h"

namespace legalnet::chess {

std::string_view termination_name(Termination t) {
  switch (t) {
    case Termination::NONE: return "none";
    case Termination::CHECKMATE: return "checkmate";
    case Termination::INSUFFICIENT_MATERIAL: return "insufficient material";
    case Termination::STALEMATE: return "stalemate";
    case Termination::SEVENTYFIVE_MOVES: return "seventy-five-move rule";
    case Termination::FIVEFOLD_REPETITION: return "fivefold repetition";
  }
  return "unknown";
}

bool has_insufficient_material(const Position& pos, Color c) {
  const Bitboard own = pos.pieces(c);
  if (own & (pos.pieces(PAWN) | pos.pieces(ROOK, QUEEN))) return false;
  if (own & pos.pieces(KNIGHT))
    // A lone knight, and the opponent has nothing to block its own king with (selfmate).
    return popcount(own) <= 2 && !(pos.pieces(~c) & ~pos.pieces(KING, QUEEN));
  if (own & pos.pieces(BISHOP)) {
    const Bitboard bishops = pos.pieces(BISHOP);
    const bool one_colour = !(bishops & DARK_SQUARES_BB) || !(bishops & ~DARK_SQUARES_BB);
    return one_colour && !pos.pieces(PAWN) && !pos.pieces(KNIGHT);
  }
  return true;
}

bool is_insufficient_material(const Position& pos) {
  return has_insufficient_material(pos, WHITE) && has_insufficient_material(pos, BLACK);
}

int repetition_count(const Position& pos) {
  const auto& states = pos.history();
  const int last = int(states.size()) - 1;
  // Only positions since the last capture or pawn move can repeat, and only those with the
  // same side to move: every second one going back.
  const int reach = std::min(int(pos.halfmove_clock()), last);
  const uint64_t key = pos.key();
  int count = 1;
  for (int back = 2; back <= reach; back += 2)
    if (states[last - back].key == key) ++count;
  return count;
}

Termination termination(const Position& pos, int legal_moves) {
  if (legal_moves == 0 && pos.in_check()) return Termination::CHECKMATE;
  if (is_insufficient_material(pos)) return Termination::INSUFFICIENT_MATERIAL;
  if (legal_moves == 0) return Termination::STALEMATE;
  if (pos.halfmove_clock() >= 150) return Termination::SEVENTYFIVE_MOVES;
  // A fivefold repetition needs at least 8 reversible plies since the first occurrence.
  if (pos.halfmove_clock() >= 8 && repetition_count(pos) >= 5) return Termination::FIVEFOLD_REPETITION;
  return Termination::NONE;
}

Termination termination(const Position& pos) { return termination(pos, MoveList(pos).size()); }

std::string_view result_string(Termination t, Color side_to_move) {
  if (t == Termination::NONE) return "*";
  if (t == Termination::CHECKMATE) return side_to_move == WHITE ? "0-1" : "1-0";
  return "1/2-1/2";
}

}  // namespace legalnet::chess
