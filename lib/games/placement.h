// Random legal placements of material: start positions that random games from the standard
// start rarely reach (many queens, castling next to attacked squares, en passant beside pins,
// crowded late boards), for data that covers every rule.
#pragma once

#include "chess/position.h"
#include "util/rng.h"

namespace legalnet {

// A random legal position drawn from rng: each side gets a king, 0-8 pawns, 0-2 knights,
// bishops and rooks and 0-1 queen, and in one side in five 1-3 promoted pieces (mostly queens)
// in place of pawns; in a third of the draws a side's king and rooks stand at home with the
// castling rights they allow; in a quarter, a pawn of the side not to move stands beside one of
// the mover's as if it had just pushed two squares, and an en-passant square is set in half the
// positions where a double push could just have happened. The side to move is either colour and may be in check. Every
// position is valid for python-chess (`Board.status() == STATUS_VALID`): the side not to move is
// not in check, at most two checkers and never two on one line through the king, at most 16
// pieces and 8 pawns a side, no pawn on the first or last rank, and an en-passant square only
// where the position before the double push was legal. Halfmove clock 0, fullmove number 1.
chess::Position random_placement(GameRng& rng);

}  // namespace legalnet
