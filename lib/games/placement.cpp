#include "games/placement.h"

#include <array>
#include <optional>
#include <string>

#include "chess/king_safety.h"
#include "util/error.h"

namespace legalnet {
namespace {

using namespace chess;

// FEN letters by colour, for P N B R Q K.
constexpr std::array<std::array<char, 6>, 2> LETTERS = {
    {{'P', 'N', 'B', 'R', 'Q', 'K'}, {'p', 'n', 'b', 'r', 'q', 'k'}}};
enum Kind { P, N, B, R, Q, K };

// A board being filled: the FEN letter on each square, '\0' when empty.
struct Board {
  std::array<char, SQUARE_NB> at{};

  bool empty(Square s) const { return at[s] == '\0'; }
  void put(Color c, Kind k, Square s) { at[s] = LETTERS[c][k]; }
  bool has(Color c, Kind k, Square s) const { return at[s] == LETTERS[c][k]; }

  // A uniformly drawn empty square among the ranks [low, high]; SQ_NONE when all are taken.
  Square random_empty(GameRng& rng, int low, int high) const {
    Square free[SQUARE_NB];
    int n = 0;
    for (int r = low; r <= high; ++r)
      for (int f = 0; f < 8; ++f)
        if (empty(make_square(f, r))) free[n++] = make_square(f, r);
    return n ? free[rng.below(uint32_t(n))] : SQ_NONE;
  }

  std::string placement() const {
    return fen_placement([&](Square s) { return at[s]; });
  }
};

// The material of one side beside its king: counts of P N B R Q.
std::array<int, 5> draw_material(GameRng& rng) {
  std::array<int, 5> n{int(rng.below(9)), int(rng.below(3)), int(rng.below(3)), int(rng.below(3)), int(rng.below(2))};
  // One side in five has promoted: 1-3 extra pieces, each in place of a pawn, mostly queens.
  if (rng.below(5) == 0) {
    const int room = 8 - n[P];
    const int extra = room == 0 ? 0 : 1 + int(rng.below(uint32_t(std::min(room, 3))));
    for (int i = 0; i < extra; ++i) {
      const uint32_t x = rng.below(10);
      ++n[x < 7 ? Q : x == 7 ? R : x == 8 ? B : N];
    }
  }
  return n;
}

// Squares of the king and rooks at home: e1, h1, a1 for white.
constexpr Square home(Color c, int which) {
  constexpr Square white[3] = {SQ_E1, SQ_H1, SQ_A1};
  return Square(white[which] + (c == BLACK ? 56 : 0));
}

// One attempt; an empty string when the draw breaks a rule and must be drawn again.
std::string draw_fen(GameRng& rng) {
  Board board;
  std::string castling;
  const Color mover = rng.below(2) ? BLACK : WHITE;
  std::array<std::array<int, 5>, 2> material{draw_material(rng), draw_material(rng)};
  // Kings (and in a third of the draws, rooks) at home first, with the castling rights they allow.
  for (Color c : {WHITE, BLACK}) {
    if (rng.below(3) != 0) continue;
    board.put(c, K, home(c, 0));
    for (int side = 1; side <= 2; ++side) {
      if (rng.below(4) == 0) continue;
      board.put(c, R, home(c, side));
      material[c][R] = std::max(material[c][R] - 1, 0);
      if (rng.below(8) != 0) castling += side == 1 ? LETTERS[c][K] : LETTERS[c][Q];
    }
  }
  for (Color c : {WHITE, BLACK}) {
    if (board.has(c, K, home(c, 0))) continue;
    const Square s = board.random_empty(rng, 0, 7);
    board.put(c, K, s);
  }
  // In a quarter of the draws, a pawn of the side not to move stands beside one of the mover's as
  // if it had just pushed two squares past it (the squares behind it kept empty): en passant is
  // otherwise rare in placements.
  const Color them = ~mover;
  Square keep_empty[2] = {SQ_NONE, SQ_NONE};
  if (rng.below(4) == 0 && material[them][P] > 0 && material[mover][P] > 0) {
    const int file = int(rng.below(8)), rank = them == WHITE ? 3 : 4;
    const int beside = file == 0 ? 1 : file == 7 ? 6 : file + (rng.below(2) ? 1 : -1);
    const Square pawn = make_square(file, rank), other = make_square(beside, rank);
    const Square behind = Square(pawn - pawn_push(them)), origin = Square(behind - pawn_push(them));
    if (board.empty(pawn) && board.empty(other) && board.empty(behind) && board.empty(origin)) {
      board.put(them, P, pawn);
      board.put(mover, P, other);
      --material[them][P];
      --material[mover][P];
      keep_empty[0] = behind;
      keep_empty[1] = origin;
      board.at[behind] = board.at[origin] = '.';  // taken while the rest is placed
    }
  }
  for (Color c : {WHITE, BLACK}) {
    for (int i = 0; i < material[c][P]; ++i) board.put(c, P, board.random_empty(rng, 1, 6));
    for (Kind k : {N, B, R, Q})
      for (int i = 0; i < material[c][k]; ++i) board.put(c, k, board.random_empty(rng, 0, 7));
  }
  for (Square s : keep_empty)
    if (s != SQ_NONE) board.at[s] = '\0';
  // "KQkq" order, as FEN writes them.
  std::string rights;
  for (char r : std::string("KQkq"))
    if (castling.find(r) != std::string::npos) rights += r;
  const std::string side = mover == WHITE ? " w " : " b ";
  return board.placement() + side + (rights.empty() ? "-" : rights) + " -";
}

// The en-passant squares behind pawns of the side not to move that could just have made a
// double push (the two squares behind the pawn empty), in square order.
std::string ep_candidates(const Position& pos) {
  const Color them = ~pos.side_to_move();
  std::string squares;
  Bitboard pawns = pos.pieces(them, PAWN);
  while (pawns) {
    const Square s = pop_lsb(pawns);
    if (relative_rank(them, rank_of(s)) != 3) continue;
    const Square behind = Square(s - pawn_push(them)), origin = Square(behind - pawn_push(them));
    if (pos.piece_on(behind) == NO_PIECE && pos.piece_on(origin) == NO_PIECE) squares += square_name(behind);
  }
  return squares;
}

// The FEN with the pawn that "just moved" back on its origin and the other side to move: that
// position must itself be legal, or no double push can have led here.
bool before_push_is_legal(const Position& pos, Square ep) {
  const Color them = ~pos.side_to_move();
  const Square pushed = Square(ep + pawn_push(them)), origin = Square(ep - pawn_push(them));
  Board board;
  for (Square s = SQ_A1; s < SQUARE_NB; s = Square(s + 1)) {
    const Piece p = pos.piece_on(s);
    if (p != NO_PIECE) board.at[s] = LETTERS[color_of(p)][type_of(p) - PAWN];
  }
  board.at[pushed] = '\0';
  board.put(them, P, origin);
  try {
    Position(board.placement() + (them == WHITE ? " w - -" : " b - -"));
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

chess::Position random_placement(GameRng& rng) {
  for (;;) {
    const std::string fen = draw_fen(rng);
    if (fen.empty()) continue;
    std::optional<Position> pos;
    try {
      // Refuses a side not to move in check (kings side by side among them). No attack table is
      // read before a Position has set them up.
      pos.emplace(fen);
    } catch (const Error&) {
      continue;
    }
    if (!checkers_possible(*pos)) continue;
    const Bitboard checkers = pos->checkers();
    // En passant in half the positions that allow one, never beside a double check.
    const std::string eps = ep_candidates(*pos);
    if (eps.empty() || popcount(checkers) > 1 || rng.below(2) == 0) return *pos;
    const size_t pick = 2 * rng.below(uint32_t(eps.size() / 2));
    const std::string ep = eps.substr(pick, 2);
    const Square ep_square = make_square(ep[0] - 'a', ep[1] - '1');
    if (!before_push_is_legal(*pos, ep_square)) return *pos;
    return Position(fen.substr(0, fen.size() - 1) + ep);
  }
}

}  // namespace legalnet
