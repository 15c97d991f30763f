#include "run/tensorize/game_router.h"

#include <fmt/core.h>

#include "util/console.h"
#include "util/error.h"
#include "util/rng.h"
#include "util/text.h"

namespace legalnet::run {
namespace {

// A file of 100,000 variant games should not print 100,000 lines: the summary counts them all.
constexpr uint64_t MAX_SKIP_MESSAGES_PER_REASON = 20;

// "games.pgn: game 12 (line 340): <what>"
std::string place_of(const EncodedGame& g, const std::string& what) {
  return fmt::format("{}: game {} (line {}): {}", g.source_path, g.number, g.first_line, what);
}

}  // namespace

GameRouter::GameRouter(const TensorizeOptions& options, TensorizeReport& report, Progress& progress)
    : options_(options), report_(report), progress_(progress) {}

std::optional<size_t> GameRouter::route(const EncodedGame& g, const data::EncodedRows& rows) {
  if (stopped()) return std::nullopt;
  ++report_.games_read;
  if (!g.error.empty()) {
    skip(g);
    return std::nullopt;
  }
  if (!g.note.empty()) note(g);
  const size_t part = part_of(g.info);
  selected_.clear();
  for (uint32_t r = g.first_row; r < g.last_row; ++r) {
    if (options_.dedupe && !seen_.insert(rows.key[r]).second) {
      ++report_.dropped_duplicates;
      continue;
    }
    selected_.push_back(r);
  }
  if (options_.max_positions && report_.positions + selected_.size() > options_.max_positions) {
    report_.stopped_at_max_positions = true;
    return std::nullopt;
  }
  report_.positions += selected_.size();
  ++report_.games;
  return part;
}

void GameRouter::skip(const EncodedGame& g) {
  const std::string message = place_of(g, g.error);
  if (options_.strict) throw Error(message);
  ++report_.skipped_games;
  const uint64_t same_reason = ++report_.skipped_by_reason[g.skip_reason];
  if (same_reason > MAX_SKIP_MESSAGES_PER_REASON) return;
  progress_.finish();
  say("tensorize: skipped {}\n", printable(message, 1000));
  if (same_reason == MAX_SKIP_MESSAGES_PER_REASON)
    say("tensorize: further games skipped for '{}' are only counted in the summary\n", printable(g.skip_reason));
}

void GameRouter::note(const EncodedGame& g) {
  if (++report_.games_with_notes > MAX_SKIP_MESSAGES_PER_REASON || options_.quiet) return;
  progress_.finish();
  say("tensorize: note: {}\n", printable(place_of(g, g.note), 1000));
}

size_t GameRouter::part_of(const data::GameInfo& game) const {
  size_t part = 0;
  if (options_.split.empty()) return part;
  // Deterministic by game identity: the same game lands in the same part in every run.
  GameRng rng(options_.split_seed, (uint64_t(game.source) << 40) ^ uint64_t(game.source_game));
  double u = rng.uniform();
  while (part + 1 < options_.split.size() && u >= options_.split[part]) u -= options_.split[part++];
  return part;
}

}  // namespace legalnet::run
