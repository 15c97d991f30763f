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

}  // namespace legalnet::encode
