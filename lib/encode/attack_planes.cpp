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

}  // namespace legalnet::encode
