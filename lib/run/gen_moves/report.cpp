#include "run/gen_moves/report.h"

#include <algorithm>
#include <string>

#include "util/console.h"
#include "util/option_table.h"
#include "util/progress.h"
#include "util/provenance.h"

namespace legalnet::run {

void GenMovesReport::add(const GenMovesReport& batch) {
  games += batch.games;
  plies += batch.plies;
  for (size_t i = 0; i < endings.size(); ++i) endings[i] += batch.endings[i];
}

std::string_view ending_name(int i) {
  return i == MAX_PLIES_ENDING ? std::string_view("max plies") : chess::termination_name(chess::Termination(i));
}

nlohmann::ordered_json GenMovesReport::json() const {
  const GenMovesReport& r = *this;
  nlohmann::ordered_json j = provenance_json("gen_moves", options.command_line);
  const nlohmann::ordered_json recorded = gen_moves_options().record(options, {{"games_in_run", options.games}});
  for (const auto& [key, value] : recorded.items()) j[key] = value;
  j["first_game"] = r.first_game;
  j["games"] = r.games;
  j["plies"] = r.plies;
  j["mean_plies"] = r.games ? double(r.plies) / double(r.games) : 0.0;
  nlohmann::ordered_json endings;
  for (int i = 1; i <= MAX_PLIES_ENDING; ++i) endings[std::string(ending_name(i))] = r.endings[i];
  j["endings"] = endings;
  j["seconds"] = r.seconds;
  j["games_per_second"] = r.seconds > 0 ? double(r.games) / r.seconds : 0.0;
  j["plies_per_second"] = r.seconds > 0 ? double(r.plies) / r.seconds : 0.0;
  return j;
}

void GenMovesReport::print() const {
  const GenMovesReport& r = *this;
  const double secs = std::max(r.seconds, 1e-9);
  say("gen_moves: {} games, {} plies, {:.1f} plies/game, {:.2f} s, {} games/s, {} plies/s\n", r.games, r.plies,
      r.games ? double(r.plies) / double(r.games) : 0.0, r.seconds, human_count(double(r.games) / secs),
      human_count(double(r.plies) / secs));
  for (int i = 1; i <= MAX_PLIES_ENDING; ++i) {
    if (!r.endings[i]) continue;
    say("  {:<24} {:>10} {:6.2f}%\n", ending_name(i), r.endings[i],
        100.0 * double(r.endings[i]) / double(std::max<uint64_t>(r.games, 1)));
  }
}

}  // namespace legalnet::run
