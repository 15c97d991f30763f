// Basic chess types: colours, pieces, squares and the 16-bit move.
#pragma once

#include <cstdint>

namespace legalnet::chess {

using Bitboard = uint64_t;

enum Color : uint8_t { WHITE, BLACK, COLOR_NB = 2 };

// Piece types are numbered so that pawn..king map to dataset planes 1..6.
enum PieceType : uint8_t { NO_PIECE_TYPE, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING, PIECE_TYPE_NB };

// A piece is (colour << 3) | type, so NO_PIECE == 0 and colour/type are one shift apart.
enum Piece : uint8_t {
  NO_PIECE,
  W_PAWN = PAWN,
  W_KNIGHT,
  W_BISHOP,
  W_ROOK,
  W_QUEEN,
  W_KING,
  B_PAWN = PAWN + 8,
  B_KNIGHT,
  B_BISHOP,
  B_ROOK,
  B_QUEEN,
  B_KING,
  PIECE_NB = 16
};

// Squares count a1 = 0, b1 = 1, ..., h8 = 63: square = rank * 8 + file.
enum Square : uint8_t {
  SQ_A1,
  SQ_B1,
  SQ_C1,
  SQ_D1,
  SQ_E1,
  SQ_F1,
  SQ_G1,
  SQ_H1,
  SQ_A2,
  SQ_B2,
  SQ_C2,
  SQ_D2,
  SQ_E2,
  SQ_F2,
  SQ_G2,
  SQ_H2,
  SQ_A3,
  SQ_B3,
  SQ_C3,
  SQ_D3,
  SQ_E3,
  SQ_F3,
  SQ_G3,
  SQ_H3,
  SQ_A4,
  SQ_B4,
  SQ_C4,
  SQ_D4,
  SQ_E4,
  SQ_F4,
  SQ_G4,
  SQ_H4,
  SQ_A5,
  SQ_B5,
  SQ_C5,
  SQ_D5,
  SQ_E5,
  SQ_F5,
  SQ_G5,
  SQ_H5,
  SQ_A6,
  SQ_B6,
  SQ_C6,
  SQ_D6,
  SQ_E6,
  SQ_F6,
  SQ_G6,
  SQ_H6,
  SQ_A7,
  SQ_B7,
  SQ_C7,
  SQ_D7,
  SQ_E7,
  SQ_F7,
  SQ_G7,
  SQ_H7,
  SQ_A8,
  SQ_B8,
  SQ_C8,
  SQ_D8,
  SQ_E8,
  SQ_F8,
  SQ_G8,
  SQ_H8,
  SQ_NONE,
  SQUARE_NB = 64
};

// Castling rights as four bits.
enum CastlingRights : uint8_t {
  NO_CASTLING = 0,
  WHITE_OO = 1,
  WHITE_OOO = 2,
  BLACK_OO = 4,
  BLACK_OOO = 8,
  ALL_CASTLING = 15
};

constexpr Color operator~(Color c) { return Color(c ^ 1); }
constexpr Piece make_piece(Color c, PieceType pt) { return Piece((c << 3) | pt); }
constexpr PieceType type_of(Piece p) { return PieceType(p & 7); }
constexpr Color color_of(Piece p) { return Color(p >> 3); }

constexpr Square make_square(int file, int rank) { return Square(rank * 8 + file); }
constexpr int file_of(Square s) { return s & 7; }
constexpr int rank_of(Square s) { return s >> 3; }
constexpr bool is_ok(Square s) { return s < SQUARE_NB; }
// The rank as seen by colour c: relative_rank(BLACK, rank 7) == 0.
constexpr int relative_rank(Color c, int rank) { return c == WHITE ? rank : 7 - rank; }
// One step forward for colour c, in square-index units.
constexpr int pawn_push(Color c) { return c == WHITE ? 8 : -8; }

// A move in 16 bits: to (0-5), from (6-11), promotion piece - KNIGHT (12-13), kind (14-15).
// Castling is stored as the king's own move (e1g1), never as king-takes-rook.
enum class MoveKind : uint8_t { NORMAL, PROMOTION, EN_PASSANT, CASTLING };

class Move {
 public:
  constexpr Move() = default;
  constexpr Move(Square from, Square to) : data_(uint16_t((from << 6) | to)) {}
  static constexpr Move make(MoveKind kind, Square from, Square to, PieceType promo = KNIGHT) {
    Move m;
    m.data_ = uint16_t((uint16_t(kind) << 14) | ((promo - KNIGHT) << 12) | (from << 6) | to);
    return m;
  }
  static constexpr Move none() { return Move(); }

  constexpr Square from() const { return Square((data_ >> 6) & 63); }
  constexpr Square to() const { return Square(data_ & 63); }
  constexpr MoveKind kind() const { return MoveKind(data_ >> 14); }
  constexpr PieceType promotion() const { return PieceType(((data_ >> 12) & 3) + KNIGHT); }
  constexpr uint16_t raw() const { return data_; }
  constexpr bool is_none() const { return data_ == 0; }

  constexpr bool operator==(Move o) const { return data_ == o.data_; }
  constexpr bool operator!=(Move o) const { return data_ != o.data_; }

 private:
  uint16_t data_ = 0;
};

}  // namespace legalnet::chess
