// What a gen_moves run made: the counts from which both --report's JSON and the terminal
// summary are printed.
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
  uint64_t first_game = 0;  // the shard's first game index
  uint64_t games = 0;
  uint64_t plies = 0;
  std::array<uint64_t, chess::TERMINATION_NB + 1> endings{};
  double seconds = 0;
  // Adds a batch's counts.
  void add(const GenMovesReport& batch);
};

// Name of ending index i of GenMovesReport::endings.
std::string_view ending_name(int i);

// --report's JSON: provenance, the run's options, the counts and the rates.
nlohmann::ordered_json report_json(const GenMovesOptions& options, const GenMovesReport& report);
// The terminal summary: one line of counts and rates, then the endings that occurred.
void print_summary(const GenMovesReport& report);

}  // namespace legalnet::run
