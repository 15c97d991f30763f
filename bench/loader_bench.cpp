// The rows/s of train's data path, without a model: reading a dataset into memory (memory
// mode's load_positions), one epoch of batches from rows in memory (MemoryBatches), and one
// epoch streamed from the file (StreamBatches, its shuffle buffer filled on the way), each
// batch expanded into inputs and 4096-wide targets as train's loader thread does. One line
// per path, "name rows seconds", for bench/data_path.py to set beside the Python readers.
// Usage: legalnet_loader_bench DATASET.h5 [BATCH] [INPUTS]
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <exception>

#include "encode/inputs.h"
#include "train/batches.h"
#include "train/stream.h"
#include "train/training_data.h"

using namespace legalnet;
using namespace legalnet::train;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every batch of one epoch of `source`; returns the rows.
uint64_t one_epoch(BatchSource& source, int batch) {
  const int64_t steps = source.steps_per_epoch();
  for (int64_t step = 0; step < steps; ++step) source.batch(step, false);
  return uint64_t(steps) * uint64_t(batch);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    fmt::print(stderr, "usage: legalnet_loader_bench DATASET.h5 [BATCH] [INPUTS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int batch = argc > 2 ? std::atoi(argv[2]) : 512;
  const encode::InputKind inputs = encode::parse_input_kind(argc > 3 ? argv[3] : "state");
  LoadOptions load;
  load.quiet = true;
  auto t0 = std::chrono::steady_clock::now();
  const CompactPositions data = load_positions({path}, load);
  fmt::print("cpp_load_positions {} {:.4f}\n", data.size(), seconds_since(t0));

  MemoryBatches memory(data, batch, 0, RowWeights{}, BatchSlice{}, inputs);
  t0 = std::chrono::steady_clock::now();
  const uint64_t memory_rows = one_epoch(memory, batch);
  fmt::print("cpp_memory_batches {} {:.4f}\n", memory_rows, seconds_since(t0));

  StreamOptions s;
  s.paths = {path};
  s.batch_size = batch;
  s.inputs = inputs;
  t0 = std::chrono::steady_clock::now();  // opening counts the rows: part of the stream's cost
  StreamBatches stream(s);
  const uint64_t stream_rows = one_epoch(stream, batch);
  fmt::print("cpp_stream_batches {} {:.4f}\n", stream_rows, seconds_since(t0));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "legalnet_loader_bench: {}\n", e.what());
  return 1;
}
