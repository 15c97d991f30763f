// Intervals for the report's proportions, so that runs and models are compared with their noise.
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

}  // namespace legalnet
