// A report card by situation: how a model does in the positions that exercise each rule (in
// check, double check, pins, en passant, castling allowed or refused, promotion, many queens, no
// legal move), on any set of positions. Pure chess logic on probabilities; no torch.
#pragma once

#include <array>
#include <cstdint>

#include "chess/movegen.h"
#include "util/stats.h"

namespace legalnet::eval {

// Situations a position can be in (one position can be in several). WITH_LEGAL_MOVE holds every
// position but those with no legal move, which NO_LEGAL_MOVE holds.
enum Situation : int {
  WITH_LEGAL_MOVE,
  SIT_IN_CHECK,
  SIT_DOUBLE_CHECK,
  SIT_PINNED_PIECE,      // a piece of the side to move is pinned to its king
  SIT_EN_PASSANT,        // an en-passant capture is legal
  SIT_CASTLING,          // a castling move is legal
  SIT_CASTLING_REFUSED,  // a castling right with the way clear, refused because a square is attacked
  SIT_PROMOTION,         // a promotion is legal
  SIT_MANY_QUEENS,       // three or more queens on the board
  SIT_NO_LEGAL_MOVE,     // checkmate or stalemate: the net should put no mass anywhere
  SITUATION_NB
};
const char* situation_name(int situation);

// The situations of pos (bit i set for Situation i).
uint32_t situations_of(const chess::Position& pos, const chess::MoveList& legal);

// One row of the card.
struct SituationRow {
  uint64_t positions = 0;
  uint64_t exact_sets = 0;  // thresholded outputs == the legal set (for no legal move: none above)
  // The illegal share of the sigmoid mass, summed (and squared, for its interval); with no legal
  // move, the mass the net puts anywhere (the sum of its outputs, at most 1).
  double illegal_mass = 0, illegal_mass_squares = 0;
  Proportion sampled_illegal;  // one move drawn per position from the outputs, as games draw them

  Proportion exact() const { return {exact_sets, positions}; }
  double mean_illegal_mass() const { return positions ? illegal_mass / double(positions) : 0.0; }
  // The 95% normal interval of the mean illegal mass.
  std::pair<double, double> illegal_mass_interval() const;
};

struct SituationCard {
  std::array<SituationRow, SITUATION_NB> rows{};

  // Adds one position with its legal moves and the model's sigmoid outputs (board order);
  // `uniform` in [0, 1) draws the sampled pick.
  void add(const chess::Position& pos, const chess::MoveList& legal, const float* probs, float threshold,
           double uniform);
};

}  // namespace legalnet::eval
