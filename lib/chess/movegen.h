// Fully legal move generation: pins, checks, double checks, en passant and castling.
#pragma once

#include <algorithm>

#include "chess/position.h"

namespace legalnet::chess {

// No legal position has more than 218 moves.
constexpr int MAX_MOVES = 256;

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
