// A report card by situation: how a model does in the positions that exercise each rule (in
// check, double check, pins, en passant, castling allowed or refused, promotion, many queens, no
// legal move), on any set of positions. Pure chess logic on probabilities; no torch.
#pragma once

#include <array>
#include <cstdint>

#include "chess/movegen.h"
#include "chess/situations.h"
#include "util/stats.h"

namespace legalnet::eval {

// The situations (chess/situations.h), named here as the card's rows.
using chess::Situation;
using enum chess::Situation;
using chess::situation_label;
using chess::situations_of;

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

  // What one position adds to the card: scored on any thread, added in the positions' order, so
  // that the card's sums are the same bytes for any thread count.
  struct Scored {
    uint32_t situations = 0;  // chess/situations.h's mask
    bool exact = false, none = false, picked_illegal = false;
    double illegal = 0;
  };
  // One position with its legal moves and the model's sigmoid outputs (board order); `uniform`
  // in [0, 1) draws the sampled pick.
  static Scored score(const chess::Position& pos, const chess::MoveList& legal, const float* probs, float threshold,
                      double uniform);
  void add(const Scored& scored);
  void add(const chess::Position& pos, const chess::MoveList& legal, const float* probs, float threshold,
           double uniform) {
    add(score(pos, legal, probs, threshold, uniform));
  }
};

}  // namespace legalnet::eval
