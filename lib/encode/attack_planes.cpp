#include "encode/attack_planes.h"

#include <cstdlib>
#include <cstring>

#include "chess/bitboard.h"
#include "encode/encode.h"

namespace legalnet::encode {
namespace {

using namespace chess;

// A board from piece codes, as bitboards from the mover's point of view.
struct Board {
  Bitboard occupied = 0, ours = 0;
  Bitboard theirs[PIECE_TYPE_NB] = {};  // by type; [0] all of them
  Square king = SQ_NONE;
  Color us = WHITE;

  Board(const int8_t* squares, int side) : us(side > 0 ? WHITE : BLACK) {
    init_bitboards();
    for (int s = 0; s < 64; ++s) {
      const int code = squares[s];
      if (!code) continue;
      occupied |= square_bb(Square(s));
      if ((code > 0) == (side > 0)) {
        ours |= square_bb(Square(s));
        if (std::abs(code) == KING) king = Square(s);
      } else {
        theirs[0] |= square_bb(Square(s));
        theirs[std::abs(code)] |= square_bb(Square(s));
      }
    }
  }
  Bitboard diagonal_sliders() const { return theirs[BISHOP] | theirs[QUEEN]; }
  Bitboard straight_sliders() const { return theirs[ROOK] | theirs[QUEEN]; }

  // Their pieces attacking square s when the board's occupancy is `occupancy`.
  Bitboard attackers(Square s, Bitboard occupancy) const {
    return (pawn_attacks(us, s) & theirs[PAWN]) | (knight_attacks(s) & theirs[KNIGHT]) |
           (bishop_attacks(s, occupancy) & diagonal_sliders()) | (rook_attacks(s, occupancy) & straight_sliders()) |
           (king_attacks(s) & theirs[KING]);
  }
};

}  // namespace

void encode_attack_planes(const int8_t* squares, int side, int8_t* out) {
  std::memset(out, 0, ATTACK_PLANES * PLANE_SIZE);
  const Board b(squares, side);
  const Color them = ~b.us;
  const Bitboard through_king = b.occupied & ~(b.king != SQ_NONE ? square_bb(b.king) : 0);
  Bitboard attacked = 0;
  for (Bitboard p = b.theirs[PAWN]; p;) attacked |= pawn_attacks(them, pop_lsb(p));
  for (Bitboard p = b.theirs[KNIGHT]; p;) attacked |= knight_attacks(pop_lsb(p));
  for (Bitboard p = b.diagonal_sliders(); p;) attacked |= bishop_attacks(pop_lsb(p), through_king);
  for (Bitboard p = b.straight_sliders(); p;) attacked |= rook_attacks(pop_lsb(p), through_king);
  for (Bitboard p = b.theirs[KING]; p;) attacked |= king_attacks(pop_lsb(p));
  for (Bitboard a = attacked; a;) out[pop_lsb(a)] = 1;
  if (b.king == SQ_NONE) return;

  // A pin: a slider on a line through the king with exactly one of our pieces between.
  const Bitboard snipers =
      (bishop_attacks(b.king, 0) & b.diagonal_sliders()) | (rook_attacks(b.king, 0) & b.straight_sliders());
  for (Bitboard s = snipers; s;) {
    const Square sniper = pop_lsb(s);
    const Bitboard blockers = between_bb(b.king, sniper) & ~square_bb(sniper) & b.occupied;
    if (blockers && !more_than_one(blockers) && (blockers & b.ours)) out[PLANE_SIZE + lsb(blockers)] = 1;
  }

  Bitboard check = 0;
  for (Bitboard c = b.attackers(b.king, b.occupied); c;) {
    const Square checker = pop_lsb(c);
    check |= between_bb(b.king, checker);  // the squares between, and the checker itself
  }
  for (; check;) out[2 * PLANE_SIZE + pop_lsb(check)] = 1;
}

bool side_to_move_in_check(const int8_t* squares, int side) {
  const Board b(squares, side);
  return b.king != SQ_NONE && b.attackers(b.king, b.occupied);
}

void square_codes(const int8_t* planes, int8_t* squares) {
  for (int s = 0; s < 64; ++s) {
    int8_t code = 0;
    for (int t = 1; t < PLANES; ++t)
      if (planes[t * PLANE_SIZE + s]) code = int8_t(planes[t * PLANE_SIZE + s] * t);
    squares[s] = code;
  }
}

}  // namespace legalnet::encode
