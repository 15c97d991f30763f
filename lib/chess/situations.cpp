#include "chess/situations.h"

#include "chess/king_safety.h"

namespace legalnet::chess {

namespace {

// Whether the side to move holds a castling right whose king and rook are at home with the
// squares between them empty, yet no castling move of that wing is legal: refused because the
// king is in check or passes through or lands on an attacked square.
bool castling_refused(const Position& pos, const MoveList& legal) {
  const Color us = pos.side_to_move();
  const uint8_t rights = pos.castling_rights() >> (us == WHITE ? 0 : 2);
  for (int wing = 0; wing < 2; ++wing) {  // 0: king side (h-rook), 1: queen side (a-rook)
    if (!(rights & (1 << wing))) continue;
    const Square king = us == WHITE ? SQ_E1 : SQ_E8;
    const Square rook = Square(king + (wing == 0 ? 3 : -4));
    // (between_bb holds its second square: the rook.)
    if (between_bb(king, rook) & ~square_bb(rook) & pos.pieces()) continue;  // blocked: not refused by attacks
    bool legal_castle = false;
    for (Move m : legal)
      if (m.kind() == MoveKind::CASTLING && (m.to() > m.from()) == (wing == 0)) legal_castle = true;
    if (!legal_castle) return true;
  }
  return false;
}

}  // namespace

uint32_t situations_of(const Position& pos, const MoveList& legal) {
  uint32_t s = 0;
  auto set = [&](Situation x, bool on) { s |= on ? 1u << x : 0u; };
  set(SIT_IN_CHECK, pos.in_check());
  set(SIT_DOUBLE_CHECK, more_than_one(pos.checkers()));
  set(SIT_PINNED_PIECE, king_safety(pos).pinned != 0);
  bool ep = false, castle = false, promotion = false;
  for (Move m : legal) {
    ep |= m.kind() == MoveKind::EN_PASSANT;
    castle |= m.kind() == MoveKind::CASTLING;
    promotion |= m.kind() == MoveKind::PROMOTION;
  }
  set(SIT_EN_PASSANT, ep);
  set(SIT_CASTLING, castle);
  set(SIT_CASTLING_REFUSED, castling_refused(pos, legal));
  set(SIT_PROMOTION, promotion);
  set(SIT_MANY_QUEENS, popcount(pos.pieces(QUEEN)) >= 3);
  set(SIT_FEW_MOVES, legal.size() != 0 && legal.size() <= FEW_MOVES);
  set(WITH_LEGAL_MOVE, legal.size() != 0);
  set(SIT_NO_LEGAL_MOVE, legal.size() == 0);
  return s;
}

}  // namespace legalnet::chess
