// The counts train and evaluate report (precision, recall and F1 from one Counts) and the
// intervals of their proportions, so that runs and models are compared with their noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace legalnet {

// The 95% Wilson score interval of a proportion, successes out of trials. Wilson rather than the
// normal approximation because the report's rates are often near 0 (illegal picks) or near 1
// (clean games, exact sets), where the normal interval leaves [0, 1] or shrinks to a point.
// No trials: {0, 0}.
inline std::pair<double, double> wilson_interval(uint64_t successes, uint64_t trials, double z = 1.96) {
  if (trials == 0) return {0.0, 0.0};
  const double n = double(trials), p = double(successes) / n;
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
  // The bounds are exact at the ends (0 of n, n of n) and always hold p: rounding would otherwise
  // put 1 just outside [low, 0.9999999999999999] and the report's checks would refuse it.
  const double low = successes == 0 ? 0.0 : std::min(p, std::max(0.0, centre - half));
  const double high = successes == trials ? 1.0 : std::max(p, std::min(1.0, centre + half));
  return {low, high};
}

// count out of total, with its value and its interval in one place.
struct Proportion {
  uint64_t count = 0, total = 0;
  double value() const { return total ? double(count) / double(total) : 0.0; }
  std::pair<double, double> interval() const { return wilson_interval(count, total); }
};

// A thresholded prediction of a set against the true set, counted over any number of positions
// or moves: the one definition of precision, recall and F1 behind train's validation rows
// (metrics.csv) and evaluate's report, overall and by kind of move. 0 where nothing was counted.
struct Counts {
  uint64_t true_positives = 0;   // predicted and legal
  uint64_t false_positives = 0;  // predicted, illegal
  uint64_t false_negatives = 0;  // legal, not predicted
  uint64_t legal() const { return true_positives + false_negatives; }
  uint64_t predicted() const { return true_positives + false_positives; }
  double precision() const { return Proportion{true_positives, predicted()}.value(); }
  double recall() const { return Proportion{true_positives, legal()}.value(); }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  // One index's outcome.
  void add(bool predicted, bool legal) {
    true_positives += predicted && legal;
    false_positives += predicted && !legal;
    false_negatives += !predicted && legal;
  }
};

}  // namespace legalnet
