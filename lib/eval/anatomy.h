// What a model gets wrong: precision and recall by kind of move, false positives by reason,
// and the probability mass on illegal moves by kind of position. Pure chess logic on move
// indices and probabilities; no torch.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "chess/movegen.h"
#include "util/stats.h"

namespace legalnet::eval {

// Kinds a move index can belong to in a position (one index can be of several kinds).
enum MoveKind : int {
  PAWN_MOVE,
  KNIGHT_MOVE,
  BISHOP_MOVE,
  ROOK_MOVE,
  QUEEN_MOVE,
  KING_MOVE,
  CAPTURE,
  CASTLING,
  EN_PASSANT,
  PROMOTION,
  CHECK_EVASION,
  PINNED_PIECE,
  MOVE_KIND_NB
};
const char* move_kind_name(int kind);

// Why a predicted move is illegal.
enum FalsePositiveReason : int {
  NOT_A_MOVE_OF_THAT_PIECE,  // no own piece on the from-square, or the piece cannot move that way
  BLOCKED,                   // the way or the target square is taken (or a pawn has nothing to take)
  KING_SAFETY,               // leaves or puts the own king in check
  CASTLING_EP_RULES,         // castling or en passant that the rules forbid here
  REASON_NB
};
const char* reason_name(int reason);

// Position buckets for the illegal probability mass.
enum PositionKind : int { IN_CHECK, NOT_IN_CHECK, OPENING, MIDDLEGAME, ENDGAME, POSITION_KIND_NB };
const char* position_kind_name(int kind);

struct Anatomy {
  uint64_t positions = 0;
  uint64_t exact_sets = 0;    // thresholded prediction == legal set
  uint64_t top1_legal = 0;    // the highest-scoring move is legal
  double legal_mass_sum = 0;  // sum over positions of P(legal) / P(all)
  Counts total;
  std::array<Counts, MOVE_KIND_NB> by_kind{};
  std::array<uint64_t, REASON_NB> false_positives{};
  std::array<double, POSITION_KIND_NB> illegal_mass{};  // summed share of illegal mass
  std::array<uint64_t, POSITION_KIND_NB> kind_positions{};

  // Adds one position with its legal moves and the model's probabilities (sigmoid outputs).
  void add(const chess::Position& pos, const chess::MoveList& legal, const float* probs, float threshold);
};

// The kinds of move index `index` in pos (bit i set for MoveKind i).
uint32_t kinds_of(const chess::Position& pos, int index, chess::Bitboard pinned);
// Why index is not legal in pos (it must not be).
FalsePositiveReason reason_illegal(const chess::Position& pos, int index);

}  // namespace legalnet::eval
