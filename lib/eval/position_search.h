// A search over legal positions for the ones a model gets wrong: from each start, edits that
// keep the position legal (a piece moved, added, removed or two swapped, castling rights, en
// passant, the side to move), steered towards the model's worst margin, for a budget of
// evaluations. A model that knows the rules is not broken by looking for its weak spots; random
// edits with the same budget are the baseline. The model is behind eval::Predictor: no torch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chess/position.h"
#include "eval/games.h"
#include "util/rng.h"
#include "util/stats.h"

namespace legalnet::eval {

struct SearchOptions {
  int budget = 2000;         // evaluations per start (the start's own included)
  int candidates = 16;       // edits of the current position scored each round (hill climbing)
  bool random_walk = false;  // one random edit a round, taken whatever its margin (the baseline)
  float threshold = 0.5f;    // a legal set is wrong when a legal move is below it or an illegal one at or above
  uint64_t seed = 0;         // start i's edits come from GameRng(seed, i)
};

// The model's worst margin in a position: the highest probability on an illegal move or one less
// the lowest on a legal one: what the search climbs. Whether a set is wrong is the report card's
// test (encode::exact_set at SearchOptions::threshold).
double worst_margin(const chess::Position& pos, const float* probs);

struct SearchStart {
  std::string start;    // the start's FEN
  bool broken = false;  // a position with a wrong legal set was found within the budget
  int evaluations = 0;  // spent: to the first break, or the whole budget
  std::string worst;    // the first wrong position, else the one with the worst margin found
  double worst_margin = 0;
  uint32_t situations = 0;    // the worst position's (eval/situations.h)
  bool start_broken = false;  // the start itself was wrong (no search needed)
};

struct SearchSummary {
  std::vector<SearchStart> starts;
  Proportion broken() const;                   // starts broken within the budget
  double median_evaluations_to_break() const;  // over the broken starts (0 when none)
  double seconds = 0;
};

// Searches from each start, all starts' candidates of a round scored in one batch.
// Deterministic from options.seed.
SearchSummary search_positions(const Predictor& predict, const std::vector<std::string>& starts,
                               const SearchOptions& options);

}  // namespace legalnet::eval
