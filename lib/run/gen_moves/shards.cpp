#include "run/gen_moves/shards.h"

#include <fmt/core.h>

#include <cstdlib>
#include <string>

#include "util/error.h"

namespace legalnet::run {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1000000)
    throw Error(std::string("environment variable ") + name + "='" + v + "' is not a count");
  return int(x);
}

}  // namespace

GameRange shard_range(uint64_t games, int shard, int num_shards) {
  const auto m = uint64_t(num_shards), k = uint64_t(shard);
  // 128-bit products: games * k overflows 64 bits only for absurd runs, but be exact anyway.
  const auto first = uint64_t((unsigned __int128)games * k / m);
  const auto last = uint64_t((unsigned __int128)games * (k + 1) / m);
  return {first, last};
}

void apply_slurm_array_shard(GenMovesOptions& options, bool shard_given) {
  if (shard_given) return;
  const int count = env_int("SLURM_ARRAY_TASK_COUNT", 0);
  if (count == 0) return;
  const int id = env_int("SLURM_ARRAY_TASK_ID", -1);
  const int min = env_int("SLURM_ARRAY_TASK_MIN", 0);
  if (id < min || id - min >= count)
    throw Error(fmt::format("SLURM_ARRAY_TASK_ID={} is outside the array (min {}, count {}): submit with --array=0-{}",
                            id, min, count, count - 1));
  options.shard = id - min;
  options.num_shards = count;
}

}  // namespace legalnet::run
