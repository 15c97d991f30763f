#include "run/tensorize/report.h"

#include <algorithm>

#include "util/console.h"
#include "util/option_table.h"
#include "util/progress.h"
#include "util/provenance.h"

namespace legalnet::run {

nlohmann::ordered_json TensorizeReport::json() const {
  const TensorizeReport& r = *this;
  nlohmann::ordered_json j = provenance_json("tensorize", options.command_line);
  const nlohmann::ordered_json recorded = tensorize_options().record(options);
  for (const auto& [key, value] : recorded.items()) j[key] = value;
  j["games_read"] = r.games_read;
  j["games_kept"] = r.games;
  j["games_skipped"] = r.skipped_games;
  j["skipped_by_reason"] = r.skipped_by_reason;
  j["games_with_notes"] = r.games_with_notes;
  j["positions"] = r.positions;
  j["duplicate_positions_dropped"] = r.dropped_duplicates;
  j["stopped_at_max_positions"] = r.stopped_at_max_positions;
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.outputs.size(); ++i)
    outputs.push_back({{"path", r.outputs[i]}, {"positions", r.output_positions[i]}});
  j["outputs"] = outputs;
  j["bytes"] = r.bytes;
  j["seconds"] = r.seconds;
  j["positions_per_second"] = r.seconds > 0 ? double(r.positions) / r.seconds : 0.0;
  return j;
}

void TensorizeReport::print() const {
  const TensorizeReport& r = *this;
  const TensorizeOptions& o = options;
  const double secs = std::max(r.seconds, 1e-9);
  say("tensorize: {} games, {} positions, {} skipped games, {:.2f} s, {} positions/s, {:.1f} bytes/position\n", r.games,
      r.positions, r.skipped_games, r.seconds, human_count(double(r.positions) / secs),
      r.positions ? double(r.bytes) / double(r.positions) : 0.0);
  if (r.games_read != r.games) say("  {} games read: {} kept, {} skipped\n", r.games_read, r.games, r.skipped_games);
  for (const auto& [reason, count] : r.skipped_by_reason) say("  skipped for {}: {}\n", reason, count);
  if (r.games_with_notes) say("  {} games kept with a note (read leniently)\n", r.games_with_notes);
  if (o.dedupe) say("  {} duplicate positions dropped\n", r.dropped_duplicates);
  if (r.stopped_at_max_positions)
    say("  stopped at --max-positions {} (before a game that would exceed it)\n", o.max_positions);
  for (size_t i = 0; i < r.outputs.size(); ++i) say("  {}: {} positions\n", r.outputs[i], r.output_positions[i]);
}

}  // namespace legalnet::run
