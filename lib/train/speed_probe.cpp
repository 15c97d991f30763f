#include "train/speed_probe.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <vector>

#include "encode/inputs.h"
#include "nn/forward.h"
#include "nn/loss.h"
#include "nn/models.h"

namespace legalnet::train {
namespace {

// Puts torch's CPU generator back as it was (the nets are made on the CPU: making one draws
// its initial weights from that generator).
class GeneratorGuard {
 public:
  GeneratorGuard() : generator_(at::detail::getDefaultCPUGenerator()) {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    state_ = generator_.get_state();
  }
  ~GeneratorGuard() {
    std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(state_);
  }
  GeneratorGuard(const GeneratorGuard&) = delete;
  GeneratorGuard& operator=(const GeneratorGuard&) = delete;

 private:
  at::Generator generator_;
  at::Tensor state_;
};

// A batch with the shapes and the sparsity of real ones (about 1 legal move in 130 indices),
// made without random numbers.
std::pair<torch::Tensor, torch::Tensor> synthetic_batch(const nn::ModelConfig& config, int rows,
                                                        const torch::Device& device) {
  const int64_t planes = encode::input_spec(config.inputs).planes;
  auto cells = torch::arange(int64_t(rows) * planes * 64, torch::kInt64);
  auto x = cells.remainder(7).eq(0).to(torch::kFloat32).reshape({rows, planes, 8, 8});
  auto y =
      torch::arange(int64_t(rows) * 4096, torch::kInt64).remainder(131).eq(0).to(torch::kFloat32).reshape({rows, 4096});
  return {x.to(device), y.to(device)};
}

// Untimed steps before the timed ones: the first ones fault in their memory and pick kernels.
constexpr int WARM_UP_STEPS = 5;

}  // namespace

SpeedProbe probe_training_speed(const nn::ModelConfig& config, int batch_size, nn::Precision precision,
                                nn::Kernels kernels, const torch::Device& device, double seconds,
                                const OptimizerFactory& make_optimizer) {
  std::shared_ptr<nn::PolicyNet> net;
  {
    GeneratorGuard keep;
    net = nn::make_model(config);
  }
  net->to(device);
  nn::choose_memory_format(*net);
  net->use_kernels(kernels);
  net->train();
  const std::unique_ptr<torch::optim::Optimizer> optimizer = make_optimizer(*net);
  const auto [x, y] = synthetic_batch(config, batch_size, device);
  auto step = [&] {
    torch::Tensor loss = nn::training_loss(*net, x, y, precision);
    optimizer->zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
    optimizer->step();
    (void)loss.item<float>();  // waits for the device
  };
  for (int i = 0; i < WARM_UP_STEPS; ++i) step();
  SpeedProbe probe;
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  do {
    const auto before = std::chrono::steady_clock::now();
    step();
    const auto after = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(after - before).count());
    ++probe.steps;
    probe.seconds = std::chrono::duration<double>(after - start).count();
  } while (probe.steps < 3 || (probe.seconds < seconds && probe.steps < 1000));
  // The median step: a slow spell of a few steps (the allocator still growing, a neighbour's
  // burst on a shared machine) does not set the rate of the whole run.
  std::nth_element(times.begin(), times.begin() + std::ptrdiff_t(times.size() / 2), times.end());
  probe.samples_per_second = double(batch_size) / times[times.size() / 2];
  return probe;
}

int64_t steps_within(double budget_seconds, const SpeedProbe& probe, int64_t rows_per_step, double share) {
  const double steps = budget_seconds * share * probe.samples_per_second / double(rows_per_step);
  return std::max<int64_t>(1, int64_t(std::floor(steps)));
}

}  // namespace legalnet::train
