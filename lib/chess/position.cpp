#include "chess/position.h"

#include <cstring>
#include <mutex>

namespace legalnet::chess {

namespace zobrist {
uint64_t psq[PIECE_NB][SQUARE_NB];
uint64_t ep_file[8];
uint64_t castling[16];
uint64_t side;
}  // namespace zobrist

namespace {

// Castling rights lost when a piece leaves or lands on a square (rook or king squares).
uint8_t castling_mask[SQUARE_NB];

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void init_tables() {
  init_bitboards();
  uint64_t state = 0x1E6A1E7;  // fixed: keys are part of reproducible outputs (--dedupe)
  for (auto& piece : zobrist::psq)
    for (auto& key : piece) key = splitmix64(state);
  for (auto& key : zobrist::ep_file) key = splitmix64(state);
  // Castling keys are the xor of one key per right, so removing a right is one xor.
  uint64_t right_keys[4];
  for (auto& key : right_keys) key = splitmix64(state);
  for (int cr = 0; cr < 16; ++cr) {
    zobrist::castling[cr] = 0;
    for (int bit = 0; bit < 4; ++bit)
      if (cr & (1 << bit)) zobrist::castling[cr] ^= right_keys[bit];
  }
  zobrist::side = splitmix64(state);

  std::memset(castling_mask, 0, sizeof castling_mask);
  castling_mask[SQ_E1] = WHITE_OO | WHITE_OOO;
  castling_mask[SQ_H1] = WHITE_OO;
  castling_mask[SQ_A1] = WHITE_OOO;
  castling_mask[SQ_E8] = BLACK_OO | BLACK_OOO;
  castling_mask[SQ_H8] = BLACK_OO;
  castling_mask[SQ_A8] = BLACK_OOO;
}

void ensure_tables() {
  static std::once_flag once;
  std::call_once(once, init_tables);
}

}  // namespace

std::string square_name(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

Position::Position() : Position(START_FEN) {}

Position::Position(std::string_view fen) : Position(fen, nullptr) {}

Position::Position(std::string_view fen, std::string* dropped) : Position(Empty{}) { set_fen(fen, dropped); }

Position::Position(Empty) { ensure_tables(); }

void Position::put_piece(Piece p, Square s) {
  board_[s] = p;
  by_type_[type_of(p)] |= square_bb(s);
  by_color_[color_of(p)] |= square_bb(s);
}

void Position::remove_piece(Square s) {
  const Piece p = board_[s];
  by_type_[type_of(p)] ^= square_bb(s);
  by_color_[color_of(p)] ^= square_bb(s);
  board_[s] = NO_PIECE;
}

void Position::move_piece(Square from, Square to) {
  const Piece p = board_[from];
  const Bitboard from_to = square_bb(from) | square_bb(to);
  by_type_[type_of(p)] ^= from_to;
  by_color_[color_of(p)] ^= from_to;
  board_[from] = NO_PIECE;
  board_[to] = p;
}

uint64_t Position::compute_key() const {
  uint64_t k = 0;
  for (Bitboard b = pieces(); b;) {
    const Square s = pop_lsb(b);
    k ^= zobrist::psq[board_[s]][s];
  }
  if (ep_square() != SQ_NONE) k ^= zobrist::ep_file[file_of(ep_square())];
  k ^= zobrist::castling[castling_rights()];
  if (side_ == BLACK) k ^= zobrist::side;
  return k;
}

Bitboard Position::attackers_to(Square s, Bitboard occupied) const {
  return (pawn_attacks(BLACK, s) & pieces(WHITE, PAWN)) | (pawn_attacks(WHITE, s) & pieces(BLACK, PAWN)) |
         (knight_attacks(s) & pieces(KNIGHT)) | (rook_attacks(s, occupied) & pieces(ROOK, QUEEN)) |
         (bishop_attacks(s, occupied) & pieces(BISHOP, QUEEN)) | (king_attacks(s) & pieces(KING));
}

Square Position::legal_ep_target(Square pushed_to) const {
  const Color us = side_, them = ~side_;
  const Square target = Square(pushed_to - pawn_push(them));
  Bitboard capturers = pawn_attacks(them, target) & pieces(us, PAWN);
  const Square ksq = king_square(us);
  while (capturers) {
    const Square from = pop_lsb(capturers);
    const Bitboard occ = (pieces() ^ square_bb(from) ^ square_bb(pushed_to)) | square_bb(target);
    const Bitboard attackers =
        ((rook_attacks(ksq, occ) & pieces(them, ROOK, QUEEN)) |
         (bishop_attacks(ksq, occ) & pieces(them, BISHOP, QUEEN)) | (knight_attacks(ksq) & pieces(them, KNIGHT)) |
         (pawn_attacks(us, ksq) & pieces(them, PAWN) & ~square_bb(pushed_to)));
    if (!attackers) return target;
  }
  return SQ_NONE;
}

void Position::do_move(Move m) {
  const Color us = side_, them = ~side_;
  const Square from = m.from(), to = m.to();
  const Piece pc = board_[from];
  const StateInfo& prev = states_.back();

  StateInfo next;
  next.key = prev.key ^ zobrist::side ^ zobrist::castling[prev.castling];
  if (prev.ep_square != SQ_NONE) next.key ^= zobrist::ep_file[file_of(prev.ep_square)];
  next.rule50 = prev.rule50 + 1;
  next.castling = prev.castling & ~(castling_mask[from] | castling_mask[to]);
  next.ep_square = SQ_NONE;
  next.captured = NO_PIECE;

  if (m.kind() == MoveKind::CASTLING) {
    const bool king_side = to > from;
    const Square rook_from = king_side ? Square(to + 1) : Square(to - 2);
    const Square rook_to = king_side ? Square(to - 1) : Square(to + 1);
    const Piece rook = board_[rook_from];
    move_piece(from, to);
    move_piece(rook_from, rook_to);
    next.key ^=
        zobrist::psq[pc][from] ^ zobrist::psq[pc][to] ^ zobrist::psq[rook][rook_from] ^ zobrist::psq[rook][rook_to];
  } else {
    Square capture_sq = to;
    if (m.kind() == MoveKind::EN_PASSANT) capture_sq = Square(to - pawn_push(us));
    if (board_[capture_sq] != NO_PIECE) {
      next.captured = board_[capture_sq];
      next.key ^= zobrist::psq[next.captured][capture_sq];
      remove_piece(capture_sq);
      next.rule50 = 0;
    }
    move_piece(from, to);
    next.key ^= zobrist::psq[pc][from] ^ zobrist::psq[pc][to];
    if (type_of(pc) == PAWN) {
      next.rule50 = 0;
      if (m.kind() == MoveKind::PROMOTION) {
        const Piece promoted = make_piece(us, m.promotion());
        remove_piece(to);
        put_piece(promoted, to);
        next.key ^= zobrist::psq[pc][to] ^ zobrist::psq[promoted][to];
      }
    }
  }
  next.key ^= zobrist::castling[next.castling];

  side_ = them;
  ++game_ply_;
  next.checkers = attackers_to(king_square(them), pieces()) & pieces(us);
  states_.push_back(next);

  if (type_of(pc) == PAWN && (int(to) ^ int(from)) == 16) {
    const Square ep = legal_ep_target(to);
    if (ep != SQ_NONE) {
      states_.back().ep_square = ep;
      states_.back().key ^= zobrist::ep_file[file_of(ep)];
    }
  }
}

void Position::undo_move(Move m) {
  const StateInfo st = states_.back();
  states_.pop_back();
  side_ = ~side_;
  --game_ply_;
  const Color us = side_;
  const Square from = m.from(), to = m.to();

  if (m.kind() == MoveKind::CASTLING) {
    const bool king_side = to > from;
    move_piece(to, from);
    move_piece(king_side ? Square(to - 1) : Square(to + 1), king_side ? Square(to + 1) : Square(to - 2));
    return;
  }
  if (m.kind() == MoveKind::PROMOTION) {
    remove_piece(to);
    put_piece(make_piece(us, PAWN), to);
  }
  move_piece(to, from);
  if (st.captured != NO_PIECE)
    put_piece(st.captured, m.kind() == MoveKind::EN_PASSANT ? Square(to - pawn_push(us)) : to);
}

}  // namespace legalnet::chess
