// Positions of a material class, to measure a model on a whole small class rather than a sample:
// the two kings and the pieces a spec names, white to move, no castling rights, no en passant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chess/position.h"
#include "util/rng.h"

namespace legalnet {

// The pieces beside the two kings, and the spec's name for them ("KQvK").
struct MaterialClass {
  std::vector<chess::Piece> pieces;
  std::string name;
};

// The classes a spec names: FEN letters of the pieces beside the kings (PNBRQ white, pnbrq
// black; "Rn": a white rook and a black knight), '?' for any one of those ten, "none" for the
// kings alone; at most two pieces. Each class once ("?q" and "q?" name the same), in the order
// of the ten letters. Throws legalnet::Error naming the spec.
std::vector<MaterialClass> material_classes(std::string_view spec);

// Every legal position of the class (python-chess's is_valid: the side not to move not in
// check, no pawn on the first or last rank, checkers a move can give), in square order: the
// white king, the black king, then each piece. Returns how many it visited.
uint64_t for_each_position(const MaterialClass& material, const std::function<void(const chess::Position&)>& visit);

// A position of the class drawn uniformly among its legal ones from GameRng(seed, index).
chess::Position sample_position(const MaterialClass& material, uint64_t seed, uint64_t index);

// A random legal position of few pieces (gen_moves --start sparse): the two kings and one to
// three more, each of a kind and colour drawn uniformly (PNBRQ pnbrq), on squares drawn
// uniformly, either side to move. Open lines, lone kings and sliders beside their own king,
// which crowded placements and random games rarely show.
chess::Position random_sparse_position(GameRng& rng);

// A random legal position of lopsided material (gen_moves --start lopsided): one side a king and
// zero to three more pieces (a pawn twice as likely as each other kind), the other side 5 to 15
// (0-6 pawns, 0-3 of each other kind; promoted pieces, never more than its missing pawns), on
// squares drawn uniformly; the weak side moves in three draws of four. No castling rights, no en
// passant. A side left with little against much is where evaluate's adversary keeps the net
// (docs/benchmarks.md#log-2026-12-07-zen3-fresh); random games and placements seldom go there.
chess::Position random_lopsided_position(GameRng& rng);

}  // namespace legalnet
