// The gen_moves tool: random games played in parallel, written as PGN in game-index order.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "chess/game_end.h"

namespace legalnet::run {

struct GenMovesOptions {
  uint64_t games = 100;  // games in the whole (unsharded) run
  uint64_t seed = 0;
  std::string out = "-";  // "-" is stdout; .gz / .zst compress
  int threads = 1;        // 0: all cores
  std::string start = "random";  // random | placement | a FEN/EPD list (games/game_start.h)
  std::string start_fen;  // with start "random": this position instead of the standard one
  int max_plies = 0;      // 0: play every game to its end
  int shard = 0;          // this process makes shard `shard` of `num_shards`
  int num_shards = 1;
  bool quiet = false;
  std::string report;      // optional summary as JSON (--report)
  std::string command_line;  // for the summary's provenance
};

// Games [first, last) of a run of `games` belong to shard k of m: contiguous blocks, so that
// the shards' outputs concatenated in shard order are byte-identical to the unsharded run.
struct GameRange {
  uint64_t first, last;
};
GameRange shard_range(uint64_t games, int shard, int num_shards);

// Fills shard/num_shards from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (offset by
// SLURM_ARRAY_TASK_MIN) when the user gave no shard; throws on inconsistent values.
void apply_slurm_array_shard(GenMovesOptions& options, bool shard_given);

// Counts how the games of a run ended; index TERMINATION_NB is "cut at max plies".
struct GenMovesStats {
  uint64_t games = 0;
  uint64_t plies = 0;
  std::array<uint64_t, chess::TERMINATION_NB + 1> endings{};
  double seconds = 0;
  void add(const GenMovesStats& other);
};

// Name of ending index i of GenMovesStats::endings.
std::string_view ending_name(int i);

// Runs the tool; throws legalnet::Error on bad options or failed output.
GenMovesStats run_gen_moves(const GenMovesOptions& options);

}  // namespace legalnet::run
