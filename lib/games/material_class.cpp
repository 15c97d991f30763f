#include "games/material_class.h"

#include <algorithm>
#include <array>
#include <optional>

#include "chess/king_safety.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/text.h"

namespace legalnet {
namespace {

using namespace chess;

constexpr std::string_view PIECE_LETTERS = "PNBRQpnbrq";  // the FEN letters of NON_KING_PIECES
constexpr const auto& PIECES = NON_KING_PIECES;
static_assert(PIECE_LETTERS.size() == PIECES.size());
constexpr size_t MAX_PIECES = 2;

std::string class_name(const std::vector<Piece>& pieces) {
  std::string white = "K", black = "K";
  for (Piece p : pieces) {
    const char letter = PIECE_LETTERS[size_t(std::find(PIECES.begin(), PIECES.end(), p) - PIECES.begin())];
    (color_of(p) == WHITE ? white : black) += char(std::toupper(letter));
  }
  return white + "v" + black;
}

// The position of the board, `side` to move; nullopt when it is not legal.
std::optional<Position> legal_position(const std::array<Piece, SQUARE_NB>& board, Color side = WHITE) {
  return possible_position(board, side, NO_CASTLING, SQ_NONE);
}

}  // namespace

std::vector<MaterialClass> material_classes(std::string_view spec) {
  const auto bad = [&](const std::string& why) {
    throw Error("--material '" + printable(std::string(spec)) + "': " + why);
  };
  if (spec == "none") return {{{}, class_name({})}};
  if (spec.empty()) bad("no pieces: give their FEN letters (PNBRQ pnbrq), '?' for any, or none for the kings alone");
  if (spec.size() > MAX_PIECES) bad("at most " + std::to_string(MAX_PIECES) + " pieces beside the kings");
  std::vector<std::vector<size_t>> choices;  // the letters each position of the spec may be
  for (char c : spec) {
    if (c == '?') {
      choices.push_back({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
      continue;
    }
    const size_t i = PIECE_LETTERS.find(c);
    if (i == std::string_view::npos) bad(std::string("'") + c + "' is not a piece letter (PNBRQ pnbrq, or ?)");
    choices.push_back({i});
  }
  std::vector<std::vector<size_t>> combos{{}};
  for (const auto& options : choices) {
    std::vector<std::vector<size_t>> next;
    for (const auto& combo : combos)
      for (size_t i : options) {
        auto c = combo;
        c.push_back(i);
        std::sort(c.begin(), c.end());
        if (std::find(next.begin(), next.end(), c) == next.end()) next.push_back(c);
      }
    combos = std::move(next);
  }
  std::sort(combos.begin(), combos.end());
  std::vector<MaterialClass> classes;
  for (const auto& combo : combos) {
    MaterialClass m;
    for (size_t i : combo) m.pieces.push_back(PIECES[i]);
    m.name = class_name(m.pieces);
    classes.push_back(std::move(m));
  }
  return classes;
}

uint64_t for_each_position(const MaterialClass& material, const std::function<void(const Position&)>& visit) {
  std::array<Piece, SQUARE_NB> board{};
  uint64_t visited = 0;
  // Square by square for each piece in turn, the kings first; a square holds one piece.
  const std::function<void(size_t)> place = [&](size_t k) {
    const Piece piece = k == 0 ? W_KING : k == 1 ? B_KING : material.pieces[k - 2];
    for (int s = 0; s < SQUARE_NB; ++s) {
      if (board[size_t(s)] != NO_PIECE) continue;
      board[size_t(s)] = piece;
      if (k + 1 < material.pieces.size() + 2) {
        place(k + 1);
      } else if (const auto pos = legal_position(board)) {
        visit(*pos);
        ++visited;
      }
      board[size_t(s)] = NO_PIECE;
    }
  };
  place(0);
  return visited;
}

namespace {

// The kings and `pieces` on squares drawn uniformly, until the position is legal.
Position draw_position(const std::vector<Piece>& pieces, Color side, GameRng& rng) {
  for (;;) {
    std::array<Piece, SQUARE_NB> board{};
    const auto put = [&](Piece p) {
      Square s;
      do s = Square(rng.below(SQUARE_NB));
      while (board[s] != NO_PIECE);
      board[s] = p;
    };
    put(W_KING);
    put(B_KING);
    for (Piece p : pieces) put(p);
    if (auto pos = legal_position(board, side)) return *pos;
  }
}

}  // namespace

Position sample_position(const MaterialClass& material, uint64_t seed, uint64_t index) {
  GameRng rng(seed, index);
  return draw_position(material.pieces, WHITE, rng);
}

Position random_sparse_position(GameRng& rng) {
  std::vector<Piece> pieces(1 + rng.below(3));
  for (Piece& p : pieces) p = PIECES[rng.below(uint32_t(PIECES.size()))];
  const Color side = rng.below(2) ? BLACK : WHITE;
  return draw_position(pieces, side, rng);
}

Position random_lopsided_position(GameRng& rng) {
  const Color weak = rng.below(2) ? BLACK : WHITE;
  std::vector<Piece> pieces;
  constexpr int WEAK_COUNTS[] = {0, 0, 1, 1, 2, 3};
  constexpr PieceType WEAK_KINDS[] = {PAWN, PAWN, KNIGHT, BISHOP, ROOK, QUEEN};
  for (int i = WEAK_COUNTS[rng.below(6)]; i > 0; --i) pieces.push_back(make_piece(weak, WEAK_KINDS[rng.below(6)]));
  // The strong side's counts of P N B R Q, drawn again until a game could have reached them.
  std::array<int, 5> n{};
  for (;;) {
    n = {int(rng.below(7)), int(rng.below(4)), int(rng.below(4)), int(rng.below(4)), int(rng.below(4))};
    const int promoted = chess::promoted_pieces(n[1], n[2], n[3], n[4]);
    const int total = n[0] + n[1] + n[2] + n[3] + n[4];
    if (promoted <= 8 - n[0] && total >= 5 && total <= 15) break;
  }
  for (int k = 0; k < 5; ++k)
    for (int i = 0; i < n[size_t(k)]; ++i) pieces.push_back(make_piece(~weak, PieceType(PAWN + k)));
  const Color side = rng.below(4) ? weak : ~weak;
  return draw_position(pieces, side, rng);
}

}  // namespace legalnet
