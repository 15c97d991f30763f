// Setting a position up, from FEN text or from its parts (a dataset row), with one set of
// checks and messages; and FEN output.
#include <algorithm>
#include <cstring>

#include "chess/position.h"
#include "util/error.h"
#include "util/text.h"

namespace legalnet::chess {
namespace {

constexpr std::string_view PIECE_CHARS = " PNBRQK  pnbrqk";
constexpr std::string_view CASTLING_LETTERS = "KQkq";  // CastlingRights bits 0..3

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

[[noreturn]] void counter_error(int field, const char* name, std::string_view text) {
  fen_error(field, std::string(name) + " '" + std::string(text) + "' is not a number");
}

int parse_counter(std::string_view text, int field, const char* name) {
  if (text.empty() || text.size() > 6) counter_error(field, name, text);
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') counter_error(field, name, text);
    value = value * 10 + (c - '0');
  }
  return value;
}

// A counter given as a number: a negative one is refused as its FEN text would be.
int checked_counter(int value, int field, const char* name) {
  if (value < 0) counter_error(field, name, std::to_string(value));
  return value;
}

}  // namespace

void Position::clear_board() {
  std::memset(board_, 0, sizeof board_);
  std::memset(by_type_, 0, sizeof by_type_);
  std::memset(by_color_, 0, sizeof by_color_);
  states_.clear();
}

void Position::check_placement() const {
  for (Color c : {WHITE, BLACK}) {
    const int kings = popcount(pieces(c, KING));
    if (kings != 1)
      fen_error(1, std::to_string(kings) + (c == WHITE ? " white" : " black") + " kings, expected exactly one");
  }
  if (pieces(PAWN) & (RANK_1_BB | RANK_8_BB)) fen_error(1, "pawn on the first or last rank");
  // Material a game can reach (promoted_pieces). This also bounds the move list
  // (chess/movegen.h, MAX_MOVES).
  for (Color c : {WHITE, BLACK}) {
    const char* side = c == WHITE ? "white" : "black";
    const int pawns = popcount(pieces(c, PAWN));
    if (pawns > 8) fen_error(1, std::to_string(pawns) + " " + side + " pawns, more than 8");
    const int promoted = promoted_pieces(popcount(pieces(c, KNIGHT)), popcount(pieces(c, BISHOP)),
                                         popcount(pieces(c, ROOK)), popcount(pieces(c, QUEEN)));
    if (promoted > 8 - pawns)
      fen_error(1, std::string(side) + " has " + std::to_string(promoted) + " promoted pieces and " +
                       std::to_string(pawns) + " pawns: more than its 8 pawns could become");
  }
}

bool Position::castling_right_holds(int bit) const {
  const Color color = bit < 2 ? WHITE : BLACK;
  const Square king = color == WHITE ? SQ_E1 : SQ_E8;
  const Square rook = Square((color == WHITE ? SQ_A1 : SQ_A8) + (bit % 2 == 0 ? 7 : 0));
  return board_[king] == make_piece(color, KING) && board_[rook] == make_piece(color, ROOK);
}

void Position::check_ep_square(Square ep) const {
  if (ep == SQ_NONE) return;
  const Color them = ~side_;
  const Square pushed = Square(ep + pawn_push(them));
  const Square origin = Square(ep - pawn_push(them));
  if (relative_rank(side_, rank_of(ep)) != 5 || board_[ep] != NO_PIECE || board_[origin] != NO_PIECE ||
      board_[pushed] != make_piece(them, PAWN))
    fen_error(4, "en-passant square " + square_name(ep) + " does not follow a double pawn push");
}

void Position::finish_setup(uint8_t castling, Square ep, int rule50, int fullmove) {
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
  states_.back().ep_square = ep != SQ_NONE ? legal_ep_target(Square(ep + pawn_push(~side_))) : SQ_NONE;
  states_.back().key = compute_key();
}

Position Position::from_parts(const std::array<Piece, SQUARE_NB>& board, Color side, uint8_t castling, Square ep,
                              int halfmove_clock, int fullmove_number) {
  Position pos{Empty{}};
  pos.clear_board();
  for (int s = 0; s < SQUARE_NB; ++s)
    if (board[size_t(s)] != NO_PIECE) pos.put_piece(board[size_t(s)], Square(s));
  pos.check_placement();
  pos.side_ = side;
  if (castling > 15) fen_error(3, "castling rights " + std::to_string(castling) + " are not 0..15");
  for (int bit = 0; bit < 4; ++bit)
    if (castling & (1 << bit) && !pos.castling_right_holds(bit))
      fen_error(3, "castling right '" + std::string(1, CASTLING_LETTERS[size_t(bit)]) +
                       "' but the king or rook is not on its square");
  pos.check_ep_square(ep);
  const int rule50 = checked_counter(halfmove_clock, 5, "halfmove clock");
  pos.finish_setup(castling, ep, rule50, checked_counter(fullmove_number, 6, "fullmove number"));
  return pos;
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
  clear_board();
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
  check_placement();

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
      const size_t idx = CASTLING_LETTERS.find(c);
      if ((c >= 'A' && c <= 'H') || (c >= 'a' && c <= 'h'))
        fen_error(3, "castling letter '" + std::string(1, c) + "' is Chess960's (Shredder-FEN), not standard chess");
      if (idx == std::string_view::npos) fen_error(3, "bad castling letter '" + std::string(1, c) + "'");
      const uint8_t right = uint8_t(1 << idx);
      if (castling & right) fen_error(3, "castling letter '" + std::string(1, c) + "' repeated");
      if (!castling_right_holds(int(idx))) {
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
    check_ep_square(ep);
  }

  // 5, 6. Counters
  const int rule50 = fields.size() > 4 ? parse_counter(fields[4], 5, "halfmove clock") : 0;
  const int fullmove = fields.size() > 5 ? parse_counter(fields[5], 6, "fullmove number") : 1;
  finish_setup(castling, ep, rule50, fullmove);
}

std::string Position::fen() const {
  std::string s = fen_placement([&](Square sq) { return board_[sq] == NO_PIECE ? '\0' : PIECE_CHARS[board_[sq]]; });
  s += side_ == WHITE ? " w " : " b ";
  const uint8_t cr = castling_rights();
  for (int bit = 0; bit < 4; ++bit)
    if (cr & (1 << bit)) s += CASTLING_LETTERS[size_t(bit)];
  if (!cr) s += '-';
  s += ' ';
  s += ep_square() == SQ_NONE ? std::string("-") : square_name(ep_square());
  s += ' ' + std::to_string(halfmove_clock()) + ' ' + std::to_string(fullmove_number());
  return s;
}

}  // namespace legalnet::chess
