#include "chess/king_safety.h"

#include "chess/bitboard.h"
#include "util/error.h"

namespace legalnet::chess {

KingSafety king_safety(Color us, Square king, Bitboard ours, const Bitboard theirs[PIECE_TYPE_NB]) {
  const Color them = ~us;
  const Bitboard diagonal = theirs[BISHOP] | theirs[QUEEN], straight = theirs[ROOK] | theirs[QUEEN];
  const Bitboard occupied = ours | theirs[PAWN] | theirs[KNIGHT] | diagonal | straight | theirs[KING];
  const Bitboard lifted = king != SQ_NONE ? occupied & ~square_bb(king) : occupied;
  KingSafety k;
  k.danger = them == WHITE ? pawn_attacks_bb<WHITE>(theirs[PAWN]) : pawn_attacks_bb<BLACK>(theirs[PAWN]);
  for (Bitboard b = theirs[KNIGHT]; b;) k.danger |= knight_attacks(pop_lsb(b));
  for (Bitboard b = diagonal; b;) k.danger |= bishop_attacks(pop_lsb(b), lifted);
  for (Bitboard b = straight; b;) k.danger |= rook_attacks(pop_lsb(b), lifted);
  for (Bitboard b = theirs[KING]; b;) k.danger |= king_attacks(pop_lsb(b));
  if (king == SQ_NONE) return k;
  const Bitboard snipers = (rook_attacks(king, 0) & straight) | (bishop_attacks(king, 0) & diagonal);
  for (Bitboard s = snipers; s;) {
    const Square sniper = pop_lsb(s);
    const Bitboard blockers = between_bb(king, sniper) & ~square_bb(sniper) & occupied;
    if (blockers && !more_than_one(blockers)) k.pinned |= blockers & ours;
  }
  k.checkers = (pawn_attacks(us, king) & theirs[PAWN]) | (knight_attacks(king) & theirs[KNIGHT]) |
               (bishop_attacks(king, occupied) & diagonal) | (rook_attacks(king, occupied) & straight) |
               (king_attacks(king) & theirs[KING]);
  return k;
}

KingSafety king_safety(const Position& pos) {
  const Color us = pos.side_to_move(), them = ~us;
  Bitboard theirs[PIECE_TYPE_NB] = {};
  for (PieceType pt : {PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING}) theirs[pt] = pos.pieces(them, pt);
  return king_safety(us, pos.king_square(us), pos.pieces(us), theirs);
}

bool checkers_possible(const Position& pos) {
  const Bitboard checkers = pos.checkers();
  const Square king = pos.king_square(pos.side_to_move());
  if (popcount(checkers) > 2) return false;
  return popcount(checkers) < 2 || !(line_bb(lsb(checkers), Square(63 - __builtin_clzll(checkers))) & square_bb(king));
}

std::optional<Position> possible_position(const std::array<Piece, SQUARE_NB>& board, Color side, uint8_t castling,
                                          Square ep) {
  try {
    Position pos = Position::from_parts(board, side, castling, ep, 0, 1);
    if (!checkers_possible(pos)) return std::nullopt;
    return pos;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace legalnet::chess
