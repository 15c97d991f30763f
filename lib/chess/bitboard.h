// Bitboards and precomputed attack tables (magic bitboards for sliders).
#pragma once

#include <cassert>

#include "chess/types.h"

namespace legalnet::chess {

constexpr Bitboard FILE_A_BB = 0x0101010101010101ULL;
constexpr Bitboard FILE_H_BB = FILE_A_BB << 7;
constexpr Bitboard RANK_1_BB = 0xFFULL;
constexpr Bitboard RANK_8_BB = RANK_1_BB << 56;
constexpr Bitboard DARK_SQUARES_BB = 0xAA55AA55AA55AA55ULL;

constexpr Bitboard square_bb(Square s) { return Bitboard(1) << s; }
constexpr Bitboard rank_bb(int rank) { return RANK_1_BB << (8 * rank); }
constexpr Bitboard file_bb(int file) { return FILE_A_BB << file; }

inline int popcount(Bitboard b) { return __builtin_popcountll(b); }
inline bool more_than_one(Bitboard b) { return b & (b - 1); }

// Returns the lowest set square of a non-empty bitboard.
inline Square lsb(Bitboard b) {
  assert(b);
  return Square(__builtin_ctzll(b));
}

// Removes and returns the lowest set square of a non-empty bitboard.
inline Square pop_lsb(Bitboard& b) {
  const Square s = lsb(b);
  b &= b - 1;
  return s;
}

// All squares of colour c's pawns shifted one step forward.
template <Color c>
constexpr Bitboard pawn_push_bb(Bitboard b) {
  return c == WHITE ? b << 8 : b >> 8;
}

// Squares attacked by colour c's pawns standing on b.
template <Color c>
constexpr Bitboard pawn_attacks_bb(Bitboard b) {
  return c == WHITE ? ((b & ~FILE_A_BB) << 7) | ((b & ~FILE_H_BB) << 9)
                    : ((b & ~FILE_A_BB) >> 9) | ((b & ~FILE_H_BB) >> 7);
}

namespace tables {

// A fancy magic: the attack set of a slider on one square is
// attacks[((occupied & mask) * magic) >> shift].
struct Magic {
  Bitboard mask;
  Bitboard magic;
  const Bitboard* attacks;
  unsigned shift;
  unsigned index(Bitboard occupied) const { return unsigned(((occupied & mask) * magic) >> shift); }
};

extern Magic rook_magics[SQUARE_NB];
extern Magic bishop_magics[SQUARE_NB];
extern Bitboard pawn_attacks[COLOR_NB][SQUARE_NB];
extern Bitboard knight_attacks[SQUARE_NB];
extern Bitboard king_attacks[SQUARE_NB];
extern Bitboard between[SQUARE_NB][SQUARE_NB];
extern Bitboard line[SQUARE_NB][SQUARE_NB];

}  // namespace tables

// Fills the attack tables once; safe to call from several threads.
void init_bitboards();

inline Bitboard rook_attacks(Square s, Bitboard occupied) {
  const tables::Magic& m = tables::rook_magics[s];
  return m.attacks[m.index(occupied)];
}
inline Bitboard bishop_attacks(Square s, Bitboard occupied) {
  const tables::Magic& m = tables::bishop_magics[s];
  return m.attacks[m.index(occupied)];
}
inline Bitboard queen_attacks(Square s, Bitboard occupied) {
  return rook_attacks(s, occupied) | bishop_attacks(s, occupied);
}
inline Bitboard knight_attacks(Square s) { return tables::knight_attacks[s]; }
inline Bitboard king_attacks(Square s) { return tables::king_attacks[s]; }
inline Bitboard pawn_attacks(Color c, Square s) { return tables::pawn_attacks[c][s]; }

// Attacks of a non-pawn piece type from s given the occupancy.
inline Bitboard attacks_bb(PieceType pt, Square s, Bitboard occupied) {
  switch (pt) {
    case KNIGHT: return knight_attacks(s);
    case BISHOP: return bishop_attacks(s, occupied);
    case ROOK: return rook_attacks(s, occupied);
    case QUEEN: return queen_attacks(s, occupied);
    case KING: return king_attacks(s);
    default: return 0;
  }
}

// Squares strictly between a and b when they share a rank, file or diagonal, else empty;
// b itself is included so that "block or capture the checker" is one mask.
inline Bitboard between_bb(Square a, Square b) { return tables::between[a][b]; }
// The whole line through a and b (edge to edge) when they are aligned, else empty.
inline Bitboard line_bb(Square a, Square b) { return tables::line[a][b]; }

}  // namespace legalnet::chess
