// Training throughput of the C++ loop: samples/s of the full loop (background batch assembly)
// against the same steps on batches already in memory, which bounds the loader's overhead.
// Usage: legalnet_train_bench DATASET.h5 KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS]
#include <fmt/core.h>

#include <chrono>

#include "nn/batches.h"
#include "nn/device.h"
#include "nn/models.h"
#include "nn/trainer.h"

using namespace legalnet::nn;

int main(int argc, char** argv) {
  ensure_passive_openmp(argv);
  if (argc < 6) {
    fmt::print(stderr, "usage: {} DATASET KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS]\n", argv[0]);
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
  LoadOptions load;
  load.quiet = true;
  load.max_rows = uint64_t(batch) * 64;
  const CompactPositions data = load_positions({argv[1]}, load);
  const torch::Device device = torch::kCPU;

  auto run = [&](bool in_memory) {
    torch::manual_seed(0);
    auto net = make_model(c);
    torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-3));
    std::vector<Batch> ready;
    if (in_memory) {
      std::vector<uint32_t> order = epoch_order(data, 0, 0);
      for (int i = 0; i < 8; ++i)
        ready.push_back(make_batch(data, order.data() + size_t(i) * size_t(batch), size_t(batch), false));
    }
    BatchLoader loader(std::make_unique<MemoryBatches>(data, batch, 0), 0, device);
    auto step = [&](int i) {
      Batch b = in_memory ? ready[size_t(i) % ready.size()] : loader.next();
      auto loss = torch::binary_cross_entropy_with_logits(net->forward(b.planes), b.targets);
      adam.zero_grad();
      loss.backward();
      adam.step();
    };
    for (int i = 0; i < 5; ++i) step(i);  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step(i);
    return double(steps) * batch / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double full = run(false), memory = run(true);
  fmt::print("{:<24} {:>9.0f} samples/s full loop, {:>9.0f} in memory, loader overhead {:+.1f}%\n", c.describe(), full,
             memory, 100 * (memory / full - 1));
  return 0;
}
