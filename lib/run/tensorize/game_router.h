// tensorize's routing stage: game by game in input order, a bad game is reported (or, with
// --strict, ends the run) and counted; a kept game goes to its --split part, chosen by the
// game's identity so that it lands in the same part in every run; --dedupe drops its rows
// already written; and the run stops before the game that would pass --max-positions.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <vector>

#include "run/tensorize/game_batches.h"
#include "run/tensorize/options.h"
#include "run/tensorize/report.h"
#include "util/progress.h"

namespace legalnet::run {

class GameRouter {
 public:
  // Counts into `report`; clears `progress`'s line before a message.
  GameRouter(const TensorizeOptions& options, TensorizeReport& report, Progress& progress);

  // The part (index into the split's datasets) game `g` of `rows` goes to, its rows to write in
  // selected(), counted as kept; nullopt for a game skipped, and for every game once the run
  // has stopped at --max-positions.
  std::optional<size_t> route(const EncodedGame& g, const data::EncodedRows& rows);
  const std::vector<uint32_t>& selected() const { return selected_; }
  bool stopped() const { return report_.stopped_at_max_positions; }

 private:
  void skip(const EncodedGame& g);  // throws with --strict
  void note(const EncodedGame& g);
  size_t part_of(const data::GameInfo& game) const;

  const TensorizeOptions& options_;
  TensorizeReport& report_;
  Progress& progress_;
  std::unordered_set<uint64_t> seen_;  // Zobrist keys written, for --dedupe
  std::vector<uint32_t> selected_;
};

}  // namespace legalnet::run
