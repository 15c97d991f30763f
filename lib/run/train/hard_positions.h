// Hard-example mining (train --mine-share): a pool of positions the training net gets most
// wrong, found by the net itself as it trains, and mixed into its batches. Every --mine-every
// steps each pool position takes one step of a climb on the net's worst margin, as evaluate's
// position search and adversary hunt (eval/position_search.h, eval/games.h): of CANDIDATES
// neighbours (positions after one of its legal moves, where the adversary steers the net, and
// random legal edits, the search's steps) it moves to the one the net gets most wrong. After
// CLIMB refreshes a position starts again from a fresh start (a random placement or a position
// of a random game), one pool position in CLIMB each refresh. No torch: the net is behind
// eval::Predictor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chess/position.h"
#include "eval/games.h"

namespace legalnet::run {

struct MiningOptions {
  double share = 0;  // of each step's rows (0: no mining)
  int every = 100;   // steps between refreshes
  int pool = 256;    // positions in the pool
  uint64_t seed = 0;
};

// What the last refresh found: how hard the pool is for the net before it trains on it.
struct MiningFigures {
  int64_t refreshes = 0;
  double wrong_share = 0;  // of the pool's positions, a wrong legal set (threshold 0.5)
  double mean_margin = 0;  // eval::worst_margin, averaged over the pool
};

class HardPositions {
 public:
  static constexpr int CANDIDATES = 8;  // neighbours scored per pool position and refresh
  static constexpr int CLIMB = 16;      // refreshes a position climbs before a fresh start

  explicit HardPositions(const MiningOptions& options);

  // The rows of each step that are mined: share x rows, at least 1, at most rows - 1.
  static int rows_of(double share, int rows);

  // Whether the pool is refreshed before step `step` trains (steps 0, every, 2 every, ...).
  bool due(int64_t step) const { return step % options_.every == 0; }
  // The refresh of step `step`: a function of the pool, the step and the net's outputs alone,
  // so every process of a run computes the same pool and a resumed run the uninterrupted one's.
  void refresh(int64_t step, const eval::Predictor& predict);
  // k positions of the pool for step `step` of process `rank` (drawn with replacement).
  std::vector<const chess::Position*> draw(int64_t step, int rank, int k) const;

  const MiningFigures& figures() const { return figures_; }
  // The pool as a checkpoint keeps it (one FEN a line), and back; restore throws
  // legalnet::Error naming `where` and the line for a pool that is not this run's.
  std::string text() const;
  void restore(std::string_view text, const std::string& where);

 private:
  MiningOptions options_;
  std::vector<chess::Position> pool_;
  MiningFigures figures_;
};

}  // namespace legalnet::run
