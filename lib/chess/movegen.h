// Fully legal move generation: pins, checks, double checks, en passant and castling.
#pragma once

#include <algorithm>

#include "chess/position.h"

namespace legalnet::chess {

// Room for every move of any position the setup accepts, whatever its geometry: the material
// check (Position::check_placement: at most 9 queens, 10 rooks, bishops or knights, 8 pawns a
// side, no more promoted pieces than missing pawns) bounds the moves by each piece's most, 9 x 27
// for the queens + 2 x 14 + 2 x 13 + 2 x 8 + 8 + 2 for the king's and castling. (No reachable
// position has more than 218; an overfull board once had 271, past a list of 256.)
constexpr int MAX_MOVES = 9 * 27 + 2 * 14 + 2 * 13 + 2 * 8 + 8 + 2;

// Writes the legal moves of pos at `list` and returns one past the last.
Move* generate_legal(const Position& pos, Move* list);

// The legal moves of a position, on the stack.
class MoveList {
 public:
  explicit MoveList(const Position& pos) : last_(generate_legal(pos, moves_)) {}
  const Move* begin() const { return moves_; }
  const Move* end() const { return last_; }
  int size() const { return int(last_ - moves_); }
  bool empty() const { return last_ == moves_; }
  Move operator[](int i) const { return moves_[i]; }
  bool contains(Move m) const { return std::find(begin(), end(), m) != end(); }

 private:
  Move moves_[MAX_MOVES];
  Move* last_;
};

}  // namespace legalnet::chess
