// Training throughput of the C++ loop with each data path: the background loader over rows in
// memory, the background loader streaming from the file (--data-mode stream), and the same
// steps on batches already in memory (no data loading), which bounds the loaders' overhead.
// The three run in turn, ROUNDS times (each round starting with another), and the median of
// each is reported, so that a slow spell of a shared machine does not land on one of them only.
// Usage: legalnet_train_bench DATASET.h5 KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS] [ROUNDS]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "nn/batches.h"
#include "nn/device.h"
#include "nn/models.h"
#include "nn/stream.h"
#include "nn/trainer.h"

using namespace legalnet::nn;

int main(int argc, char** argv) {
  ensure_passive_openmp(argv);
  if (argc < 6) {
    fmt::print(stderr, "usage: {} DATASET KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS] [ROUNDS]\n", argv[0]);
    return 2;
  }
  ModelConfig c;
  c.kind = argv[2];
  c.hidden = std::atoi(argv[3]);
  c.blocks = std::atoi(argv[4]);
  c.channels = std::atoi(argv[5]);
  c = c.resolved();
  const int steps = argc > 6 ? std::atoi(argv[6]) : 60;
  const int batch = argc > 7 ? std::atoi(argv[7]) : 256;
  configure_threads(argc > 8 ? std::atoi(argv[8]) : 0);
  const int rounds = argc > 9 ? std::atoi(argv[9]) : 3;
  LoadOptions load;
  load.quiet = true;
  load.max_rows = uint64_t(batch) * 64;
  const CompactPositions data = load_positions({argv[1]}, load);
  const torch::Device device = torch::kCPU;
  StreamOptions stream_options;
  stream_options.paths = {argv[1]};
  stream_options.batch_size = batch;
  stream_options.shuffle_buffer = 1 << 16;

  enum Path { MEMORY, STREAM, READY };
  auto run = [&](Path path) {
    torch::manual_seed(0);
    auto net = make_model(c);
    torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-3));
    std::vector<Batch> ready;
    std::unique_ptr<BatchLoader> loader;
    if (path == READY) {
      std::vector<uint32_t> order = epoch_order(data, 0, 0);
      for (int i = 0; i < 8; ++i)
        ready.push_back(make_batch(data, order.data() + size_t(i) * size_t(batch), size_t(batch), false));
    } else if (path == MEMORY) {
      loader = std::make_unique<BatchLoader>(std::make_unique<MemoryBatches>(data, batch, 0), 0, device);
    } else {
      loader = std::make_unique<BatchLoader>(std::make_unique<StreamBatches>(stream_options), 0, device);
    }
    auto step = [&](int i) {
      Batch b = path == READY ? ready[size_t(i) % ready.size()] : loader->next();
      auto loss = torch::binary_cross_entropy_with_logits(net->forward(b.planes), b.targets);
      adam.zero_grad();
      loss.backward();
      adam.step();
    };
    // Warm-up; the stream fills its shuffle buffer before its first batch.
    for (int i = 0; i < 5; ++i) step(i);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step(i);
    return double(steps) * batch / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> rates[3];
  // Each round starts with another path, so that no path always runs first or last.
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 3; ++k) {
      const Path p = Path((r + k) % 3);
      rates[p].push_back(run(p));
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double memory = median(rates[MEMORY]), stream = median(rates[STREAM]), ready = median(rates[READY]);
  // The loaders' work itself, timed alone on this thread: what a batch would cost the loop if
  // the background thread did not overlap it with training (an upper bound that the noise of a
  // shared machine does not blur).
  auto seconds_per_batch = [&](BatchSource& source) {
    source.batch(0, false);  // the stream fills its buffer here
    const int n = 200;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 1; i <= n; ++i) source.batch(i, false);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
  };
  MemoryBatches memory_source(data, batch, 0);
  StreamBatches stream_source(stream_options);
  const double step_seconds = batch / ready;
  const double memory_work = seconds_per_batch(memory_source), stream_work = seconds_per_batch(stream_source);
  fmt::print(
      "{:<24} {:>7.0f} samples/s loader (memory), {:>7.0f} streamed, {:>7.0f} on ready batches; overhead "
      "{:+.1f}% / {:+.1f}% (median of {} rounds of {} steps); loader work {:.2f} / {:.2f} ms a batch = {:.1f}% / "
      "{:.1f}% of a {:.1f} ms step\n",
      c.describe(), memory, stream, ready, 100 * (1 - memory / ready), 100 * (1 - stream / ready), rounds, steps,
      1e3 * memory_work, 1e3 * stream_work, 100 * memory_work / step_seconds, 100 * stream_work / step_seconds,
      1e3 * step_seconds);
  return 0;
}
