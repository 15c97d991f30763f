// What a tensorize run read, kept and skipped, so that a user can reconcile it against the
// files: games_read = games (kept) + skipped_games (+ games after a --max-positions stop, not
// read). Both --report's JSON (json()) and the terminal summary (print()) are written from it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/tensorize/options.h"

namespace legalnet::run {

struct TensorizeReport {
  TensorizeOptions options;  // the run's
  uint64_t games_read = 0, games = 0, positions = 0, skipped_games = 0, dropped_duplicates = 0;
  std::map<std::string, uint64_t> skipped_by_reason;  // "illegal or unreadable move", "variant Atomic", ...
  uint64_t games_with_notes = 0;                      // read leniently, e.g. void castling rights dropped
  bool stopped_at_max_positions = false;
  std::vector<std::string> outputs;
  std::vector<uint64_t> output_positions;
  uint64_t bytes = 0;
  double seconds = 0;

  // --report's JSON: provenance, the run's options (tensorize_options().record(): the inputs),
  // the counts, the outputs and the rate.
  nlohmann::ordered_json json() const;
  // The terminal summary on stderr: the counts and rates, then what was skipped, dropped and
  // written where.
  void print() const;
};

}  // namespace legalnet::run
