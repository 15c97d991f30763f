#include "chess/position.h"

#include <cstring>
#include <mutex>

#include "util/error.h"
#include "util/text.h"

namespace legalnet::chess {

namespace zobrist {
uint64_t psq[PIECE_NB][SQUARE_NB];
uint64_t ep_file[8];
uint64_t castling[16];
uint64_t side;
}  // namespace zobrist

namespace {

constexpr std::string_view PIECE_CHARS = " PNBRQK  pnbrqk";

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

// Splits on runs of spaces; FEN fields never contain spaces.
std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) fields.push_back(s.substr(start, i - start));
  }
  return fields;
}

// (`what` quotes the FEN, which comes from a file or a command line: printable.)
[[noreturn]] void fen_error(int field, const std::string& what) {
  throw Error("FEN field " + std::to_string(field) + ": " + printable(what));
}

[[noreturn]] void fen_rank_error(int rank, const std::string& what) {
  throw Error("FEN field 1, rank " + std::to_string(rank + 1) + ": " + printable(what));
}

int parse_counter(std::string_view text, int field, const char* name) {
  if (text.empty() || text.size() > 6)
    fen_error(field, std::string(name) + " '" + std::string(text) + "' is not a number");
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') fen_error(field, std::string(name) + " '" + std::string(text) + "' is not a number");
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::string square_name(Square s) { return {char('a' + file_of(s)), char('1' + rank_of(s))}; }

Position::Position() : Position(START_FEN) {}

Position::Position(std::string_view fen) : Position(fen, nullptr) {}

Position::Position(std::string_view fen, std::string* dropped) {
  ensure_tables();
  set_fen(fen, dropped);
}

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

// FEN has six space-separated fields (the last two, the counters, may be left out):
//  1. placement, rank 8 first, files a..h, digits for empty squares, PNBRQK white, pnbrqk black
//  2. side to move, w or b
//  3. castling rights, '-' or a subset of KQkq (the king and that rook must be on their squares;
//     Chess960's file letters, Shredder-FEN and X-FEN, are refused by name)
//  4. en-passant target square behind a pawn that has just made a double push, or '-'
//  5. halfmove clock (plies since the last capture or pawn move)
//  6. fullmove number, starting at 1
void Position::set_fen(std::string_view fen, std::string* dropped_castling) {
  std::memset(board_, 0, sizeof board_);
  std::memset(by_type_, 0, sizeof by_type_);
  std::memset(by_color_, 0, sizeof by_color_);
  states_.clear();

  const auto fields = split_fields(fen);
  if (fields.size() < 4 || fields.size() > 6)
    throw Error("FEN has " + std::to_string(fields.size()) + " fields, expected 6 (or 4 without counters)");

  // 1. Placement
  int rank = 7, file = 0;
  for (size_t i = 0; i <= fields[0].size(); ++i) {
    const char c = i < fields[0].size() ? fields[0][i] : '/';
    if (c == '/') {
      if (file != 8) fen_rank_error(rank, std::to_string(file) + " squares");
      if (i == fields[0].size()) break;
      if (--rank < 0) fen_error(1, "more than 8 ranks");
      file = 0;
    } else if (c >= '1' && c <= '8') {
      file += c - '0';
      if (file > 8) fen_rank_error(rank, std::to_string(file) + " squares");
    } else {
      const size_t idx = PIECE_CHARS.find(c);
      if (c == ' ' || idx == std::string_view::npos)
        fen_rank_error(rank, "bad piece letter '" + std::string(1, c) + "'");
      if (file >= 8) fen_rank_error(rank, std::to_string(file + 1) + " squares");
      put_piece(Piece(idx), make_square(file++, rank));
    }
  }
  if (rank != 0) fen_error(1, std::to_string(8 - rank) + " ranks, expected 8");
  for (Color c : {WHITE, BLACK}) {
    const int kings = popcount(pieces(c, KING));
    if (kings != 1)
      fen_error(1, std::to_string(kings) + (c == WHITE ? " white" : " black") + " kings, expected exactly one");
  }
  if (pieces(PAWN) & (RANK_1_BB | RANK_8_BB)) fen_error(1, "pawn on the first or last rank");

  // 2. Side to move
  if (fields[1] == "w")
    side_ = WHITE;
  else if (fields[1] == "b")
    side_ = BLACK;
  else
    fen_error(2, "side to move '" + std::string(fields[1]) + "', expected w or b");

  // 3. Castling
  uint8_t castling = NO_CASTLING;
  if (fields[2] != "-") {
    for (char c : fields[2]) {
      const size_t idx = std::string_view("KQkq").find(c);
      if ((c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h'))
        fen_error(3, "castling letter '" + std::string(1, c) + "' is Chess960's (Shredder-FEN), not standard chess");
      if (idx == std::string_view::npos) fen_error(3, "bad castling letter '" + std::string(1, c) + "'");
      const uint8_t right = uint8_t(1 << idx);
      if (castling & right) fen_error(3, "castling letter '" + std::string(1, c) + "' repeated");
      const Color color = idx < 2 ? WHITE : BLACK;
      const Square king = color == WHITE ? SQ_E1 : SQ_E8;
      const Square rook = Square((color == WHITE ? SQ_A1 : SQ_A8) + (idx % 2 == 0 ? 7 : 0));
      if (board_[king] != make_piece(color, KING) || board_[rook] != make_piece(color, ROOK)) {
        if (dropped_castling) {
          *dropped_castling += c;
          continue;
        }
        fen_error(3, "castling right '" + std::string(1, c) + "' but the king or rook is not on its square");
      }
      castling |= right;
    }
  }

  // 4. En passant
  Square ep = SQ_NONE;
  if (fields[3] != "-") {
    const auto f = fields[3];
    if (f.size() != 2 || f[0] < 'a' || f[0] > 'h' || f[1] < '1' || f[1] > '8')
      fen_error(4, "en-passant square '" + std::string(f) + "' is not a square");
    ep = make_square(f[0] - 'a', f[1] - '1');
    const Color them = ~side_;
    const Square pushed = Square(ep + pawn_push(them));
    const Square origin = Square(ep - pawn_push(them));
    if (relative_rank(side_, rank_of(ep)) != 5 || board_[ep] != NO_PIECE || board_[origin] != NO_PIECE ||
        board_[pushed] != make_piece(them, PAWN))
      fen_error(4, "en-passant square " + std::string(f) + " does not follow a double pawn push");
  }

  // 5, 6. Counters
  const int rule50 = fields.size() > 4 ? parse_counter(fields[4], 5, "halfmove clock") : 0;
  const int fullmove = fields.size() > 5 ? parse_counter(fields[5], 6, "fullmove number") : 1;
  game_ply_ = 2 * (std::max(fullmove, 1) - 1) + (side_ == BLACK);

  if (attacked_by(side_, king_square(~side_))) fen_error(1, "the side not to move is in check");

  StateInfo st{};
  st.castling = castling;
  st.rule50 = uint32_t(rule50);
  st.captured = NO_PIECE;
  st.checkers = attackers_to(king_square(side_), pieces()) & pieces(~side_);
  states_.reserve(512);
  states_.push_back(st);
  // Keep the square only when a capture there is legal, so keys and FEN output are canonical.
  if (ep != SQ_NONE)
    states_.back().ep_square = legal_ep_target(Square(ep + pawn_push(~side_)));
  else
    states_.back().ep_square = SQ_NONE;
  states_.back().key = compute_key();
}

std::string Position::fen() const {
  std::string s;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const Piece p = board_[make_square(file, rank)];
      if (p == NO_PIECE) {
        ++empty;
        continue;
      }
      if (empty) s += char('0' + empty);
      empty = 0;
      s += PIECE_CHARS[p];
    }
    if (empty) s += char('0' + empty);
    if (rank) s += '/';
  }
  s += side_ == WHITE ? " w " : " b ";
  const uint8_t cr = castling_rights();
  if (cr & WHITE_OO) s += 'K';
  if (cr & WHITE_OOO) s += 'Q';
  if (cr & BLACK_OO) s += 'k';
  if (cr & BLACK_OOO) s += 'q';
  if (!cr) s += '-';
  s += ' ';
  s += ep_square() == SQ_NONE ? std::string("-") : square_name(ep_square());
  s += ' ' + std::to_string(halfmove_clock()) + ' ' + std::to_string(fullmove_number());
  return s;
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
