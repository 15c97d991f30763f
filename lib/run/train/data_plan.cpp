#include "run/train/data_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "util/choices.h"
#include "util/error.h"

namespace legalnet::run {
namespace {

// Bytes a position takes in memory (CompactPositions: 64 squares, about 35 legal moves of
// 2 bytes, game, ply, offsets); the estimate behind --data-mode auto.
constexpr double COMPACT_BYTES_PER_POSITION = 160;

// Batches a process holds at once: the loader's queue (train/batches.cpp's depth, 4), the batch
// it fills and the one training; each row as floats, its inputs and 4096-wide targets.
constexpr double BATCHES_AT_ONCE = 6;

// MemAvailable of /proc/meminfo ("MemAvailable:   20912644 kB"); 0 when unknown.
uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) * 1024;
  return 0;
}

}  // namespace

DataPlan plan_data(const TrainOptions& o, train::Collectives& ranks, const std::vector<data::DatasetReader>& data) {
  uint64_t positions = 0;
  for (const auto& reader : data) positions += reader.num_positions();
  const double need = double(positions) * COMPACT_BYTES_PER_POSITION;
  const uint64_t available = available_memory_bytes();
  const double per_process = double(available) / std::max(1, o.ranks.local_world_size);  // of this node's
  // Unknown memory (no /proc/meminfo): assume the data fits, as before streaming existed.
  const double budget = available ? per_process / 2 : need;
  // A batch too large for this machine is refused here, before any row is read (--batch-size
  // allows 2^20 rows, 20 GB of batches: the kernel would kill the process midway): a lower
  // bound, the network's activations come on top.
  const double batches = BATCHES_AT_ONCE * double(o.batch_size) *
                         double(o.model.input_planes() * 64 + encode::MOVE_INDICES) * sizeof(float);
  if (ranks.any(available && batches > per_process))
    throw Error(fmt::format(
        "--batch-size {}: its batches take about {:.1f} GB ({:g} of {} positions at a time, inputs and 4096-wide "
        "targets as floats), more than the {:.1f} GB of memory available {}; take a smaller batch",
        o.batch_size, batches / 1e9, BATCHES_AT_ONCE, o.batch_size, per_process / 1e9,
        o.ranks.local_world_size > 1 ? "to each process on this node" : "here"));
  DataPlan plan;
  plan.streamed = ranks.any(o.data_mode == DataMode::STREAM || (o.data_mode == DataMode::AUTO && need > budget));
  if (plan.streamed)
    plan.description =
        fmt::format("streaming {} positions from the files ({}data-mode {}), shuffle buffer {} positions", positions,
                    o.data_mode == DataMode::AUTO
                        ? fmt::format("about {} MB would not fit in half the memory available, ", int64_t(need / 1e6))
                        : "",
                    choice_of(DATA_MODES, o.data_mode).name, o.shuffle_buffer);
  else
    plan.description = fmt::format("{} positions in memory, about {} MB (data-mode {})", positions, int64_t(need / 1e6),
                                   choice_of(DATA_MODES, o.data_mode).name);
  return plan;
}

}  // namespace legalnet::run
