// Planes derived from a board that make king safety visible to a network: the predecessor's
// 7 planes show where the pieces are, but not which squares the opponent attacks, which pieces
// are pinned or which squares answer a check, and 84% of a trained net's remaining false
// positives were moves that leave or put its own king in check. Models built with inputs
// "attacks" or "state+attacks" take these 3 planes after the others (inputs.h), computed from
// the board alone.
// Boards here are 64 signed piece codes (+type white, -type black, 0 empty; square = rank *
// 8 + file) and the side to move (+1 white, -1 black), as datasets and training rows hold them.
#pragma once

#include <cstdint>

namespace legalnet::encode {

constexpr int ATTACK_PLANES = 3;
// Plane 0: squares the side not to move attacks, seen through the mover's king (so that a
//          king stepping back along a checking line is seen to stay in check).
// Plane 1: the mover's pieces pinned to its king.
// Plane 2: when the mover is in check, the checking pieces and the squares between a
//          checking slider and the king (where a capture or block answers a single check);
//          empty otherwise.
// Writes 0/1 to out[ATTACK_PLANES * 64], [plane * 64 + square].
void encode_attack_planes(const int8_t* squares, int side, int8_t* out);

// The rules head's targets with ModelConfig::rule_lines (train --rule-lines): what the vetoes
// (nn/model_config.h) need to know of a square, each pin by its line and the check rule as a
// fact of every square, in the frame's squares (ranks flipped when `flip_ranks`):
// Plane 0:   plane 0 above (the squares the side not to move attacks).
// Plane 1-4: the mover's pieces pinned along a file, a diagonal (both coordinates rising
//            together in the frame), a rank, an antidiagonal: the vetoes' lines 0-3.
// Plane 5:   the squares a move of a piece other than the king may end on by the check rule:
//            all of them out of check; in a single check the checker and the squares between
//            a checking slider and the king (an en-passant capture of a checking pawn aside);
//            none in a double check.
// Writes 0/1 to out[RULE_LINE_PLANES * 64], [plane * 64 + square].
constexpr int RULE_LINE_PLANES = 6;
void encode_rule_line_planes(const int8_t* squares, int side, bool flip_ranks, int8_t* out);

}  // namespace legalnet::encode
