// What a gen_moves run made: the options and the counts from which both --report's JSON (json())
// and the terminal summary (print()) are written.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "chess/game_end.h"
#include "run/gen_moves/options.h"

namespace legalnet::run {

// Index of GenMovesReport::endings that counts games cut at --max-plies (the others are the
// chess::Termination values).
inline constexpr int MAX_PLIES_ENDING = chess::TERMINATION_NB;

struct GenMovesReport {
  GenMovesOptions options;  // the run's (a batch's counts leave them default)
  uint64_t first_game = 0;  // the shard's first game index
  uint64_t games = 0;
  uint64_t plies = 0;
  std::array<uint64_t, chess::TERMINATION_NB + 1> endings{};
  double seconds = 0;
  // Adds a batch's counts.
  void add(const GenMovesReport& batch);

  // --report's JSON: provenance, the run's options (gen_moves_options().record()), the counts and
  // the rates.
  nlohmann::ordered_json json() const;
  // The terminal summary on stderr: one line of counts and rates, then the endings that occurred.
  void print() const;
};

// Name of ending index i of GenMovesReport::endings.
std::string_view ending_name(int i);

}  // namespace legalnet::run
