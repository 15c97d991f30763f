#include "encode/attack_planes.h"

#include <cstdlib>
#include <cstring>

#include "chess/bitboard.h"
#include "chess/king_safety.h"
#include "encode/encode.h"

namespace legalnet::encode {
namespace {

using namespace chess;

// A board from piece codes, as bitboards from the mover's point of view.
struct Board {
  Bitboard occupied = 0, ours = 0;
  Bitboard theirs[PIECE_TYPE_NB] = {};  // by type
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
        theirs[std::abs(code)] |= square_bb(Square(s));
      }
    }
  }
};

}  // namespace

void encode_attack_planes(const int8_t* squares, int side, int8_t* out) {
  std::memset(out, 0, ATTACK_PLANES * PLANE_SIZE);
  const Board b(squares, side);
  // The king lifted off the board for the attacked squares: the squares it cannot flee to.
  const KingSafety safety = king_safety(b.us, b.king, b.ours, b.theirs);
  for (Bitboard a = safety.danger; a;) out[pop_lsb(a)] = 1;
  for (Bitboard p = safety.pinned; p;) out[PLANE_SIZE + pop_lsb(p)] = 1;
  Bitboard check = 0;
  for (Bitboard c = safety.checkers; c;)
    check |= between_bb(b.king, pop_lsb(c));  // the squares between, and the checker
  for (; check;) out[2 * PLANE_SIZE + pop_lsb(check)] = 1;
}

void encode_rule_line_planes(const int8_t* squares, int side, bool flip_ranks, int8_t* out) {
  std::memset(out, 0, RULE_LINE_PLANES * PLANE_SIZE);
  const Board b(squares, side);
  const KingSafety safety = king_safety(b.us, b.king, b.ours, b.theirs);
  const int flip = flip_ranks ? 56 : 0;
  for (Bitboard a = safety.danger; a;) out[pop_lsb(a) ^ flip] = 1;
  for (Bitboard p = safety.pinned; p;) {
    const int s = pop_lsb(p) ^ flip, k = b.king ^ flip;
    const int df = s % 8 - k % 8, dr = s / 8 - k / 8;
    const int line = df == 0 ? 0 : dr == 0 ? 2 : (df > 0) == (dr > 0) ? 1 : 3;
    out[(1 + line) * PLANE_SIZE + s] = 1;
  }
  const int checkers = popcount(safety.checkers);
  const Bitboard allowed = checkers == 0   ? ~Bitboard(0)
                           : checkers == 1 ? between_bb(b.king, lsb(safety.checkers))
                                           : Bitboard(0);
  for (Bitboard a = allowed; a;) out[5 * PLANE_SIZE + (pop_lsb(a) ^ flip)] = 1;
}

}  // namespace legalnet::encode
