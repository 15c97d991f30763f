#include "eval/anatomy.h"

#include "chess/king_safety.h"

#include <algorithm>

#include "encode/encode.h"

namespace legalnet::eval {

using namespace chess;

const char* move_kind_name(int kind) {
  static const char* names[] = {"pawn",    "knight",   "bishop",     "rook",      "queen",         "king",
                                "capture", "castling", "en passant", "promotion", "check evasion", "pinned piece"};
  return names[kind];
}

const char* reason_name(int reason) {
  static const char* names[] = {"not a move of that piece", "blocked", "leaves or puts own king in check",
                                "castling / en passant rules"};
  return names[reason];
}

const char* position_kind_name(int kind) {
  static const char* names[] = {"in check", "not in check", "opening (>24 pieces)", "middlegame (13-24 pieces)",
                                "endgame (<=12 pieces)"};
  return names[kind];
}

namespace {

bool is_castling_shape(const Position& pos, Square from, Square to) {
  const Color us = pos.side_to_move();
  return pos.piece_on(from) == make_piece(us, KING) && from == (us == WHITE ? SQ_E1 : SQ_E8) &&
         rank_of(to) == rank_of(from) && std::abs(file_of(to) - file_of(from)) == 2;
}

bool is_pawn_diagonal(const Position& pos, Square from, Square to) {
  const Color us = pos.side_to_move();
  return type_of(pos.piece_on(from)) == PAWN && (pawn_attacks(us, from) & square_bb(to));
}

// Whether the piece on `from` could ever move to `to` on an empty board.
bool fits_pattern(const Position& pos, Square from, Square to) {
  const Piece p = pos.piece_on(from);
  const Color us = pos.side_to_move();
  switch (type_of(p)) {
    case PAWN: {
      const int forward = (int(rank_of(to)) - int(rank_of(from))) * (us == WHITE ? 1 : -1);
      if (file_of(to) == file_of(from)) return forward == 1 || (forward == 2 && relative_rank(us, rank_of(from)) == 1);
      return is_pawn_diagonal(pos, from, to);
    }
    case KING: return (king_attacks(from) & square_bb(to)) || is_castling_shape(pos, from, to);
    default: return attacks_bb(type_of(p), from, 0) & square_bb(to);
  }
}

}  // namespace

uint32_t kinds_of(const Position& pos, int index, Bitboard pinned) {
  const Square from = encode::index_from(index), to = encode::index_to(index);
  const Piece p = pos.piece_on(from);
  uint32_t k = 0;
  if (p == NO_PIECE || color_of(p) != pos.side_to_move()) return pos.in_check() ? 1u << CHECK_EVASION : 0u;
  const PieceType pt = type_of(p);
  k |= 1u << (int(PAWN_MOVE) + int(pt) - int(PAWN));
  const Piece target = pos.piece_on(to);
  const bool ep = pt == PAWN && to == pos.ep_square();
  if ((target != NO_PIECE && color_of(target) != pos.side_to_move()) || ep) k |= 1u << CAPTURE;
  if (ep) k |= 1u << EN_PASSANT;
  if (is_castling_shape(pos, from, to)) k |= 1u << CASTLING;
  if (pt == PAWN && (rank_of(to) == 0 || rank_of(to) == 7)) k |= 1u << PROMOTION;
  if (pos.in_check()) k |= 1u << CHECK_EVASION;
  if (pinned & square_bb(from)) k |= 1u << PINNED_PIECE;
  return k;
}

FalsePositiveReason reason_illegal(const Position& pos, int index) {
  const Square from = encode::index_from(index), to = encode::index_to(index);
  const Piece p = pos.piece_on(from);
  const Color us = pos.side_to_move();
  if (p == NO_PIECE || color_of(p) != us || !fits_pattern(pos, from, to)) return NOT_A_MOVE_OF_THAT_PIECE;
  if (is_castling_shape(pos, from, to)) return CASTLING_EP_RULES;
  const Piece target = pos.piece_on(to);
  if (target != NO_PIECE && color_of(target) == us) return BLOCKED;
  const PieceType pt = type_of(p);
  if (pt == PAWN) {
    if (is_pawn_diagonal(pos, from, to)) {
      if (target == NO_PIECE) {
        // An empty diagonal square: an en-passant attempt where none is legal, unless the
        // square behind holds an enemy pawn that just moved there (then it is king safety).
        return CASTLING_EP_RULES;
      }
    } else {
      const int step = us == WHITE ? 8 : -8;
      if (target != NO_PIECE || (std::abs(int(to) - int(from)) == 16 && pos.piece_on(Square(from + step)) != NO_PIECE))
        return BLOCKED;
    }
  } else if (pt == BISHOP || pt == ROOK || pt == QUEEN) {
    if (between_bb(from, to) & ~square_bb(to) & pos.pieces()) return BLOCKED;
  }
  // The move is pseudo-legal; the rules forbid it only for the king's safety.
  return KING_SAFETY;
}

void Anatomy::add(const Position& pos, const MoveList& legal, const float* probs, float threshold) {
  ++positions;
  const encode::LegalMask is_legal(legal);
  const Bitboard pinned = king_safety(pos).pinned;
  int best = 0;
  bool exact = true;
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    const float p = probs[i];
    if (p > probs[best]) best = i;
    const bool predicted = p >= threshold;
    if (predicted != is_legal[i]) exact = false;
    if (!predicted && !is_legal[i]) continue;
    const uint32_t kinds = kinds_of(pos, i, pinned);
    auto count = [&](Counts& c) { c.add(predicted, is_legal[i]); };
    count(total);
    if (predicted && !is_legal[i]) ++false_positives[reason_illegal(pos, i)];
    for (int k = 0; k < MOVE_KIND_NB; ++k)
      if (kinds & (1u << k)) count(by_kind[size_t(k)]);
  }
  exact_sets += exact;
  top1_legal += is_legal[best];
  const double legal_share = encode::legal_share(probs, is_legal);
  legal_mass_sum += legal_share;
  const int pieces = popcount(pos.pieces());
  for (int kind : {pos.in_check() ? IN_CHECK : NOT_IN_CHECK, pieces > 24   ? OPENING
                                                             : pieces > 12 ? MIDDLEGAME
                                                                           : ENDGAME}) {
    illegal_mass[size_t(kind)] += 1.0 - legal_share;
    ++kind_positions[size_t(kind)];
  }
}

}  // namespace legalnet::eval
