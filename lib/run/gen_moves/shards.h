// A gen_moves run split into shards (one process each, a Slurm array say): which games a shard
// makes, and the shard taken from Slurm's environment when the command line names none.
#pragma once

#include <cstdint>

#include "run/gen_moves/options.h"

namespace legalnet::run {

// Games [first, last) of a run of `games` belong to shard k of m: contiguous blocks, so that
// the shards' outputs concatenated in shard order are byte-identical to the unsharded run.
struct GameRange {
  uint64_t first, last;
};
GameRange shard_range(uint64_t games, int shard, int num_shards);

// Fills shard/num_shards from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT (offset by
// SLURM_ARRAY_TASK_MIN) when the user gave no shard; throws on inconsistent values.
void apply_slurm_array_shard(GenMovesOptions& options, bool shard_given);

}  // namespace legalnet::run
