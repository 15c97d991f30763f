#include "chess/legal_edits.h"

#include <array>
#include <string>
#include <utility>

#include "chess/king_safety.h"

namespace legalnet::chess {

namespace {

struct Parts {
  std::array<Piece, SQUARE_NB> board{};
  Color side = WHITE;
  uint8_t castling = 0;
  Square ep = SQ_NONE;
};

Parts parts_of(const Position& pos) {
  Parts p;
  for (int s = 0; s < SQUARE_NB; ++s) p.board[size_t(s)] = pos.piece_on(Square(s));
  p.side = pos.side_to_move();
  p.castling = pos.castling_rights();
  p.ep = pos.ep_square();
  return p;
}

Square random_square(GameRng& rng, const Parts& p, bool occupied, bool king_too = true) {
  Square squares[SQUARE_NB];
  int n = 0;
  for (int s = 0; s < SQUARE_NB; ++s) {
    const Piece piece = p.board[size_t(s)];
    if ((piece != NO_PIECE) == occupied && (king_too || piece == NO_PIECE || type_of(piece) != KING))
      squares[n++] = Square(s);
  }
  return n ? squares[rng.below(uint32_t(n))] : SQ_NONE;
}

// One edit of the parts, whatever it leaves: the caller keeps only legal results.
bool edit(Parts& p, GameRng& rng) {
  p.ep = SQ_NONE;  // kept only by the en-passant edit: a double push is the last move
  switch (rng.below(7)) {
    case 0: {  // move a piece
      const Square from = random_square(rng, p, true), to = random_square(rng, p, false);
      if (from == SQ_NONE || to == SQ_NONE) return false;
      std::swap(p.board[from], p.board[to]);
      return true;
    }
    case 1: {  // add one
      const Square to = random_square(rng, p, false);
      if (to == SQ_NONE) return false;
      p.board[to] = NON_KING_PIECES[rng.below(uint32_t(NON_KING_PIECES.size()))];
      return true;
    }
    case 2: {  // remove one (never a king)
      const Square s = random_square(rng, p, true, false);
      if (s == SQ_NONE) return false;
      p.board[s] = NO_PIECE;
      return true;
    }
    case 3: {  // swap two
      const Square a = random_square(rng, p, true), b = random_square(rng, p, true);
      if (a == b || p.board[a] == p.board[b]) return false;
      std::swap(p.board[a], p.board[b]);
      return true;
    }
    case 4:  // castling rights: a random subset (the setup refuses those that do not hold)
      p.castling = uint8_t(rng.below(16));
      return true;
    case 5: {  // en passant behind a pawn of the side not to move that may have just pushed two
      const Color them = ~p.side;
      const int rank = them == WHITE ? 3 : 4;
      const int file = int(rng.below(8));
      const Square pawn = make_square(file, rank);
      if (p.board[pawn] != make_piece(them, PAWN)) return false;
      p.ep = Square(pawn - pawn_push(them));
      return true;
    }
    default:  // the other side to move
      p.side = ~p.side;
      return true;
  }
}

}  // namespace

std::optional<Position> random_edit(const Position& pos, GameRng& rng) {
  const Parts start = parts_of(pos);
  const std::string fen = pos.fen();
  for (int tries = 0; tries < 64; ++tries) {
    Parts p = start;
    if (!edit(p, rng)) continue;
    if (std::optional<Position> next = possible_position(p.board, p.side, p.castling, p.ep)) {
      if (next->fen() != fen) return next;
    }
  }
  return std::nullopt;
}

}  // namespace legalnet::chess
