#include "chess/notation.h"

#include <cctype>

#include "util/error.h"
#include "util/text.h"

namespace legalnet::chess {
namespace {

constexpr char PIECE_LETTER[PIECE_TYPE_NB] = {' ', 'P', 'N', 'B', 'R', 'Q', 'K'};

PieceType piece_from_letter(char c) {
  switch (c) {
    case 'N': return KNIGHT;
    case 'B': return BISHOP;
    case 'R': return ROOK;
    case 'Q': return QUEEN;
    case 'K': return KING;
    default: return NO_PIECE_TYPE;
  }
}

bool is_file(char c) { return c >= 'a' && c <= 'h'; }
bool is_rank(char c) { return c >= '1' && c <= '8'; }

[[noreturn]] void san_error(std::string_view text, const std::string& why) {
  throw Error("move '" + printable(text, 40) + "': " + why);
}

}  // namespace

std::string to_uci(Move m) {
  std::string s = square_name(m.from()) + square_name(m.to());
  if (m.kind() == MoveKind::PROMOTION) s += char(PIECE_LETTER[m.promotion()] - 'A' + 'a');
  return s;
}

Move parse_uci(const Position& pos, std::string_view text) {
  const MoveList legal(pos);
  for (Move m : legal) {
    if (to_uci(m) == text) return m;
    // Castling also as the king taking its own rook (e1h1, e8a8): UCI_Chess960's spelling, which
    // some GUIs send in standard chess too, and python-chess reads.
    if (m.kind() == MoveKind::CASTLING && text.size() == 4) {
      const Square rook = Square(m.to() > m.from() ? m.from() + 3 : m.from() - 4);
      if (to_uci(Move(m.from(), rook)) == text) return m;
    }
  }
  if (text.size() < 4 || text.size() > 5 || !is_file(text[0]) || !is_rank(text[1]) || !is_file(text[2]) ||
      !is_rank(text[3]))
    san_error(text, "not UCI notation");
  if (text.size() == 4)  // a pawn reaching the last rank: UCI names the piece it becomes
    for (Move m : legal)
      if (m.kind() == MoveKind::PROMOTION && to_uci(m).compare(0, 4, text) == 0)
        san_error(text, "a promotion names its piece in UCI (" + std::string(text) + "q, " + std::string(text) + "r, " +
                            std::string(text) + "b or " + std::string(text) + "n)");
  san_error(text, "illegal in " + pos.fen());
}

void append_san_body(const Position& pos, Move m, const MoveList& legal, std::string& out) {
  const Square from = m.from(), to = m.to();
  if (m.kind() == MoveKind::CASTLING) {
    out += to > from ? "O-O" : "O-O-O";
    return;
  }
  const PieceType pt = pos.moved_piece_type(m);
  const bool capture = pos.is_capture(m);
  if (pt == PAWN) {
    if (capture) {
      out += char('a' + file_of(from));
      out += 'x';
    }
  } else {
    out += PIECE_LETTER[pt];
    // Other pieces of the same type that can reach the same square force a disambiguation.
    bool ambiguous = false, same_file = false, same_rank = false;
    for (Move other : legal) {
      if (other.to() != to || other.from() == from || pos.moved_piece_type(other) != pt) continue;
      ambiguous = true;
      same_file |= file_of(other.from()) == file_of(from);
      same_rank |= rank_of(other.from()) == rank_of(from);
    }
    if (ambiguous) {
      if (!same_file)
        out += char('a' + file_of(from));
      else if (!same_rank)
        out += char('1' + rank_of(from));
      else
        out += square_name(from);
    }
    if (capture) out += 'x';
  }
  out += char('a' + file_of(to));
  out += char('1' + rank_of(to));
  if (m.kind() == MoveKind::PROMOTION) {
    out += '=';
    out += PIECE_LETTER[m.promotion()];
  }
}

std::string to_san(Position& pos, Move m) {
  std::string s;
  append_san_body(pos, m, MoveList(pos), s);
  pos.do_move(m);
  if (pos.in_check()) s += MoveList(pos).empty() ? '#' : '+';
  pos.undo_move(m);
  return s;
}

Move parse_san(const Position& pos, std::string_view text) { return parse_san(pos, text, MoveList(pos)); }

Move parse_san(const Position& pos, std::string_view text, const MoveList& legal) {
  std::string_view s = text;
  while (!s.empty() && (s.back() == '+' || s.back() == '#' || s.back() == '!' || s.back() == '?')) s.remove_suffix(1);
  if (s.empty()) san_error(text, "empty move");

  if (s == "O-O" || s == "0-0" || s == "O-O-O" || s == "0-0-0") {
    const bool king_side = s.size() == 3;
    for (Move m : legal)
      if (m.kind() == MoveKind::CASTLING && (m.to() > m.from()) == king_side) return m;
    san_error(text, "castling is illegal in " + pos.fen());
  }

  // "exd6 e.p." written as one token.
  if (s.size() > 4 && s.substr(s.size() - 4) == "e.p.") s.remove_suffix(4);

  // Promotion suffix: =Q, Q or (Q) after the destination square; d8q in UCI-style text.
  PieceType promotion = NO_PIECE_TYPE;
  auto after_square = [&](size_t suffix) { return s.size() > suffix && is_rank(s[s.size() - suffix - 1]); };
  if (s.size() >= 3 && s.back() == ')' && s[s.size() - 3] == '(') {
    promotion = piece_from_letter(s[s.size() - 2]);
    if (promotion == NO_PIECE_TYPE) san_error(text, std::string("'") + s[s.size() - 2] + "' is not a piece");
    s.remove_suffix(3);
  } else if (s.size() >= 2 && s[s.size() - 2] == '=') {
    promotion = piece_from_letter(char(std::toupper(static_cast<unsigned char>(s.back()))));
    if (promotion == NO_PIECE_TYPE) san_error(text, std::string("'") + s.back() + "' is not a piece");
    s.remove_suffix(2);
  } else if (after_square(1) &&
             piece_from_letter(char(std::toupper(static_cast<unsigned char>(s.back())))) != NO_PIECE_TYPE) {
    promotion = piece_from_letter(char(std::toupper(static_cast<unsigned char>(s.back()))));
    s.remove_suffix(1);
  }
  if (promotion == KING) san_error(text, "cannot promote to a king");

  if (s.size() < 2 || !is_file(s[s.size() - 2]) || !is_rank(s.back())) san_error(text, "no destination square");
  const Square to = make_square(s[s.size() - 2] - 'a', s.back() - '1');
  s.remove_suffix(2);
  if (!s.empty() && (s.back() == 'x' || s.back() == ':' || s.back() == '-')) s.remove_suffix(1);

  // The piece letter; without one the move is a pawn's, unless a whole origin square names it
  // (UCI-style g1f3 and long algebraic e1-g1).
  PieceType piece = NO_PIECE_TYPE;
  if (!s.empty() && (piece_from_letter(s.front()) != NO_PIECE_TYPE || s.front() == 'P')) {
    piece = s.front() == 'P' ? PAWN : piece_from_letter(s.front());
    s.remove_prefix(1);
  }
  int from_file = -1, from_rank = -1;
  if (!s.empty() && is_file(s.front())) {
    from_file = s.front() - 'a';
    s.remove_prefix(1);
  }
  if (!s.empty() && is_rank(s.front())) {
    from_rank = s.front() - '1';
    s.remove_prefix(1);
  }
  if (!s.empty()) san_error(text, "not SAN");
  const bool whole_origin = from_file >= 0 && from_rank >= 0;
  if (piece == NO_PIECE_TYPE && !whole_origin) piece = PAWN;
  if (promotion != NO_PIECE_TYPE && piece != PAWN && piece != NO_PIECE_TYPE) san_error(text, "only pawns promote");

  Move found = Move::none();
  int matches = 0;
  for (Move m : legal) {
    if (m.to() != to || (piece != NO_PIECE_TYPE && pos.moved_piece_type(m) != piece)) continue;
    if (from_file >= 0 && file_of(m.from()) != from_file) continue;
    if (from_rank >= 0 && rank_of(m.from()) != from_rank) continue;
    if (m.kind() == MoveKind::PROMOTION) {
      if (promotion == NO_PIECE_TYPE) san_error(text, "promotion piece missing");
      if (m.promotion() != promotion) continue;
    } else if (promotion != NO_PIECE_TYPE) {
      continue;
    }
    found = m;
    ++matches;
  }
  if (matches == 0) san_error(text, "illegal in " + pos.fen());
  if (matches > 1) san_error(text, "ambiguous in " + pos.fen());
  return found;
}

std::string castling_dropped_note(std::string_view dropped) {
  return "castling rights '" + std::string(dropped) + "' dropped (the king or rook is not on its square)";
}

}  // namespace legalnet::chess
