#include "chess/movegen.h"

#include "chess/king_safety.h"

namespace legalnet::chess {
namespace {

// Emits one move per target square.
inline Move* emit(Move* list, Square from, Bitboard targets) {
  while (targets) *list++ = Move(from, pop_lsb(targets));
  return list;
}

// Emits the four promotions of a pawn move.
inline Move* emit_promotions(Move* list, Square from, Square to) {
  for (PieceType pt : {QUEEN, ROOK, BISHOP, KNIGHT}) *list++ = Move::make(MoveKind::PROMOTION, from, to, pt);
  return list;
}

// Emits pawn moves given by a target set whose origins are target - delta.
template <Color Us>
inline Move* emit_pawn_targets(Move* list, Bitboard targets, int delta) {
  constexpr Bitboard LAST_RANK = Us == WHITE ? RANK_8_BB : RANK_1_BB;
  for (Bitboard b = targets & LAST_RANK; b;) {
    const Square to = pop_lsb(b);
    list = emit_promotions(list, Square(to - delta), to);
  }
  for (Bitboard b = targets & ~LAST_RANK; b;) {
    const Square to = pop_lsb(b);
    *list++ = Move(Square(to - delta), to);
  }
  return list;
}

// Whether our king would be attacked after our pawn on `from` takes en passant on `to`.
template <Color Us>
bool en_passant_exposes_king(const Position& pos, Square from, Square to) {
  constexpr Color Them = ~Us;
  const Square captured = Square(to - pawn_push(Us));
  const Square ksq = pos.king_square(Us);
  const Bitboard occupied = (pos.pieces() ^ square_bb(from) ^ square_bb(captured)) | square_bb(to);
  return (rook_attacks(ksq, occupied) & pos.pieces(Them, ROOK, QUEEN)) ||
         (bishop_attacks(ksq, occupied) & pos.pieces(Them, BISHOP, QUEEN)) ||
         (knight_attacks(ksq) & pos.pieces(Them, KNIGHT)) ||
         (pawn_attacks(Us, ksq) & pos.pieces(Them, PAWN) & ~square_bb(captured));
}

template <Color Us>
Move* generate(const Position& pos, Move* list) {
  constexpr Color Them = ~Us;
  constexpr int UP = Us == WHITE ? 8 : -8;
  constexpr Bitboard THIRD_RANK = Us == WHITE ? rank_bb(2) : rank_bb(5);

  const Bitboard ours = pos.pieces(Us), theirs = pos.pieces(Them), occupied = ours | theirs;
  const Square ksq = pos.king_square(Us);
  const KingSafety safety = king_safety(pos);
  const Bitboard checkers = safety.checkers, danger = safety.danger, pinned = safety.pinned;

  list = emit(list, ksq, king_attacks(ksq) & ~ours & ~danger);
  if (more_than_one(checkers)) return list;  // double check: only the king moves

  // Non-king moves must land on `target`: anywhere, or block/capture the single checker.
  const Bitboard target = (checkers ? between_bb(ksq, lsb(checkers)) : ~Bitboard(0)) & ~ours;

  if (!checkers) {
    const uint8_t cr = pos.castling_rights();
    constexpr uint8_t OO = Us == WHITE ? WHITE_OO : BLACK_OO, OOO = Us == WHITE ? WHITE_OOO : BLACK_OOO;
    constexpr Square E = Us == WHITE ? SQ_E1 : SQ_E8;
    if ((cr & OO) && !(occupied & (square_bb(Square(E + 1)) | square_bb(Square(E + 2)))) &&
        !(danger & (square_bb(Square(E + 1)) | square_bb(Square(E + 2)))))
      *list++ = Move::make(MoveKind::CASTLING, E, Square(E + 2));
    if ((cr & OOO) && !(occupied & (square_bb(Square(E - 1)) | square_bb(Square(E - 2)) | square_bb(Square(E - 3)))) &&
        !(danger & (square_bb(Square(E - 1)) | square_bb(Square(E - 2)))))
      *list++ = Move::make(MoveKind::CASTLING, E, Square(E - 2));
  }

  // Knights: a pinned knight never moves.
  for (Bitboard b = pos.pieces(Us, KNIGHT) & ~pinned; b;) {
    const Square from = pop_lsb(b);
    list = emit(list, from, knight_attacks(from) & target);
  }
  for (Bitboard b = pos.pieces(Us, BISHOP, QUEEN); b;) {
    const Square from = pop_lsb(b);
    Bitboard moves = bishop_attacks(from, occupied) & target;
    if (pinned & square_bb(from)) moves &= line_bb(ksq, from);
    list = emit(list, from, moves);
  }
  for (Bitboard b = pos.pieces(Us, ROOK, QUEEN); b;) {
    const Square from = pop_lsb(b);
    Bitboard moves = rook_attacks(from, occupied) & target;
    if (pinned & square_bb(from)) moves &= line_bb(ksq, from);
    list = emit(list, from, moves);
  }

  // Pawns that are not pinned, all at once by shifting.
  const Bitboard pawns = pos.pieces(Us, PAWN) & ~pinned;
  const Bitboard single = pawn_push_bb<Us>(pawns) & ~occupied;
  const Bitboard dbl = pawn_push_bb<Us>(single & THIRD_RANK) & ~occupied & target;
  list = emit_pawn_targets<Us>(list, single & target, UP);
  for (Bitboard b = dbl; b;) {
    const Square to = pop_lsb(b);
    *list++ = Move(Square(to - 2 * UP), to);
  }
  const Bitboard capture_target = theirs & target;
  const Bitboard west = Us == WHITE ? (pawns & ~FILE_A_BB) << 7 : (pawns & ~FILE_A_BB) >> 9;
  const Bitboard east = Us == WHITE ? (pawns & ~FILE_H_BB) << 9 : (pawns & ~FILE_H_BB) >> 7;
  list = emit_pawn_targets<Us>(list, west & capture_target, Us == WHITE ? 7 : -9);
  list = emit_pawn_targets<Us>(list, east & capture_target, Us == WHITE ? 9 : -7);

  // Pinned pawns, one by one, along the pin line (they can never answer a check).
  if (!checkers) {
    for (Bitboard b = pos.pieces(Us, PAWN) & pinned; b;) {
      const Square from = pop_lsb(b);
      const Bitboard pin_line = line_bb(ksq, from);
      Bitboard moves = pawn_attacks(Us, from) & theirs;
      const Bitboard push = pawn_push_bb<Us>(square_bb(from)) & ~occupied;
      moves |= push | (pawn_push_bb<Us>(push & THIRD_RANK) & ~occupied);
      for (moves &= pin_line; moves;) {
        const Square to = pop_lsb(moves);
        if (rank_of(to) == 0 || rank_of(to) == 7)
          list = emit_promotions(list, from, to);
        else
          *list++ = Move(from, to);
      }
    }
  }

  // En passant: rare, so each capture is checked by looking at the king after it.
  const Square ep = pos.ep_square();
  if (ep != SQ_NONE) {
    for (Bitboard b = pawn_attacks(Them, ep) & pos.pieces(Us, PAWN); b;) {
      const Square from = pop_lsb(b);
      if (!en_passant_exposes_king<Us>(pos, from, ep)) *list++ = Move::make(MoveKind::EN_PASSANT, from, ep);
    }
  }
  return list;
}

}  // namespace

Move* generate_legal(const Position& pos, Move* list) {
  return pos.side_to_move() == WHITE ? generate<WHITE>(pos, list) : generate<BLACK>(pos, list);
}

}  // namespace legalnet::chess
