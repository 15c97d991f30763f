// What a dataset stores of a position and its moves: the predecessor's 7x8x8 planes, the 4096
// move index (from * 64 + to) and the legal-move mask. What a network sees is encode/inputs.h.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "chess/movegen.h"

namespace legalnet::encode {

constexpr int PLANES = 7;                           // side to move, pawn, knight, bishop, rook, queen, king
constexpr int PLANE_SIZE = 64;                      // [rank][file], rank 0 = rank 1, file 0 = file a
constexpr int POSITION_SIZE = PLANES * PLANE_SIZE;  // 448 int8 values per position
constexpr int MOVE_INDICES = 64 * 64;               // from * 64 + to

// from_square * 64 + to_square. The four promotions of one pawn move share the index (the
// queen promotion stands for them) and castling is the king's move (e1g1 = 4 * 64 + 6).
inline int move_index(chess::Move m) { return m.from() * 64 + m.to(); }
inline chess::Square index_from(int index) { return chess::Square(index / 64); }
inline chess::Square index_to(int index) { return chess::Square(index % 64); }
// The index as its from- and to-squares, "e2e4" (a promotion without its piece).
inline std::string index_name(int index) {
  return chess::square_name(index_from(index)) + chess::square_name(index_to(index));
}

// Writes the planes of pos to out[448], as the predecessor did: plane 0 all +1 when white is
// to move and all -1 when black is; plane p in 1..6 holds +1 for a white piece of type p and
// -1 for a black one, 0 elsewhere; element [plane * 64 + rank * 8 + file].
void encode_planes(const chess::Position& pos, int8_t* out);

// The legal moves of a position as the set of their move indices (board order): what every
// metric that walks the 4096 indices (the anatomy, the gallery, the pictures) tests against.
class LegalMask {
 public:
  explicit LegalMask(const chess::MoveList& legal) {
    for (chess::Move m : legal) bits_.set(size_t(move_index(m)));
  }
  bool operator[](int index) const { return bits_[size_t(index)]; }

 private:
  std::bitset<MOVE_INDICES> bits_;
};

// The share of the probability mass probs[4096] (board order) that lies on legal moves, and
// the rest, the illegal mass that the report and the gallery measure; a legal share of 0 when
// there is no mass.
double legal_share(const float* probs, const LegalMask& legal);
inline double illegal_share(const float* probs, const LegalMask& legal) { return 1.0 - legal_share(probs, legal); }

// Whether the moves whose probability is at least `threshold` are exactly the legal ones: the
// exact legal set that the report card counts and the position search breaks.
bool exact_set(const float* probs, const LegalMask& legal, float threshold);

// Whether a position has a legal castling or en-passant move: the rare kinds (under 1% of
// positions), which train can weight (--rare-weight) and evaluate counts over a whole set.
inline bool has_rare_move(const chess::MoveList& legal) {
  for (chess::Move m : legal)
    if (m.kind() == chess::MoveKind::CASTLING || m.kind() == chess::MoveKind::EN_PASSANT) return true;
  return false;
}

// The k (clamped to 1..4096) move indices of probs[4096] with the highest values, highest first.
std::vector<int> top_indices(const float* probs, int k);

// Sets out[4096] to 1 at the index of every legal move and 0 elsewhere: the dataset's mask.
void encode_legal_mask(const chess::MoveList& legal, uint8_t* out);

// Whether an index can ever be a legal move: a queen line or a knight jump from `from` to
// `to` (1792 of the 4096 indices). The others are fixed off by the models.
bool index_is_geometric(int index);
constexpr int GEOMETRIC_INDICES = 1792;

// The move type of a geometric index, 0..63: direction d (N, NE, E, SE, S, SW, W, NW) and
// distance k (1..7) give d * 7 + k - 1, the 8 knight jumps 56..63; -1 for the others. A
// policy head shaped like the board predicts, for each from-square, one logit per type.
int move_type_of(int index);

// The planes of a position plus the state they do not show: castling rights (KQkq bits as
// in chess::CastlingRights), the en-passant square (-1 for none) and the counters. Throws
// legalnet::Error when the planes are not a valid position.
chess::Position decode_position(const int8_t* planes, uint8_t castling, int en_passant, int halfmove_clock,
                                int fullmove_number);

// The 64 signed piece codes of a position's planes (+type white, -type black, 0 empty), the
// boards training rows and the attack planes read.
void square_codes(const int8_t* planes, int8_t* squares);

}  // namespace legalnet::encode
