// What threatens a king, computed once from the pieces alone: the squares the opponent attacks,
// our pinned pieces and the checkers. Move generation, the error anatomy and the engine-assisted
// input planes all read it (as Stockfish computes blockers and pinners once per position), from
// a Position or from the bitboards of a board decoded from training rows.
#pragma once

#include <array>
#include <optional>

#include "chess/position.h"

namespace legalnet::chess {

struct KingSafety {
  Bitboard danger = 0;    // squares the opponent attacks, with our king lifted off the board (so
                          // that the king cannot step back along the ray of a checking slider)
  Bitboard pinned = 0;    // our pieces that stand alone between our king and an opponent's slider
  Bitboard checkers = 0;  // the opponent's pieces that attack our king
};

// `theirs` holds the opponent's pieces by type (PAWN..KING); without a king (a decoded board
// may lack one) only `danger` is set.
KingSafety king_safety(Color us, Square king, Bitboard ours, const Bitboard theirs[PIECE_TYPE_NB]);
KingSafety king_safety(const Position& pos);

// Whether the side to move's checkers are some that a move can give (python-chess's
// STATUS_TOO_MANY_CHECKERS and STATUS_IMPOSSIBLE_CHECK): at most two, never two on one line
// through the king. The setup accepts the others; generators of legal positions refuse them.
bool checkers_possible(const Position& pos);

// Every piece but the kings, white's then black's (P N B R Q): what generators of positions add.
constexpr std::array<Piece, 10> NON_KING_PIECES = {W_PAWN, W_KNIGHT, W_BISHOP, W_ROOK, W_QUEEN,
                                                   B_PAWN, B_KNIGHT, B_BISHOP, B_ROOK, B_QUEEN};

// The position of these parts when the setup accepts it (Position::from_parts' checks) and its
// checkers are possible, else nullopt: what generators of legal positions keep.
std::optional<Position> possible_position(const std::array<Piece, SQUARE_NB>& board, Color side, uint8_t castling,
                                          Square ep);

}  // namespace legalnet::chess
