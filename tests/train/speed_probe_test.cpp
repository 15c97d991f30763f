// train/speed_probe: the measurement before a run that --time-budget sizes the run from.
#include "train/speed_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "nn/models.h"

namespace legalnet::train {
namespace {

nn::ModelConfig tiny_resnet() {
  nn::ModelConfig c;
  c.kind = nn::ModelKind::RESNET;
  c.blocks = 1;
  c.channels = 8;
  return c.resolved();
}

TEST(SpeedProbe, TimesStepsWithoutDrawingFromTorchsGenerator) {
  torch::manual_seed(7);
  const torch::Tensor expected = torch::rand({4});
  torch::manual_seed(7);
  const SpeedProbe probe = probe_training_speed(
      tiny_resnet(), 16, nn::Precision::FP32, nn::Kernels::TORCH, torch::kCPU, 0.05, [](nn::PolicyNet& net) {
        return std::make_unique<torch::optim::Adam>(net.parameters(), torch::optim::AdamOptions(1e-4));
      });
  EXPECT_TRUE(torch::equal(torch::rand({4}), expected)) << "the probe changed what the run draws next";
  EXPECT_GE(probe.steps, 3);
  EXPECT_GT(probe.seconds, 0);
  // The rate is the median step's: at least half the mean step's rate (half the steps take at
  // least the median, so the mean step is at least half the median), never zero.
  const double mean_rate = double(probe.steps) * 16 / probe.seconds;
  EXPECT_GE(probe.samples_per_second, 0.5 * mean_rate * (1 - 1e-9));
  EXPECT_TRUE(std::isfinite(probe.samples_per_second));
}

// An optimizer that counts its steps.
struct CountingSgd : torch::optim::SGD {
  CountingSgd(std::vector<torch::Tensor> params, int* count)
      : torch::optim::SGD(std::move(params), torch::optim::SGDOptions(1e-3)), count_(count) {}
  torch::Tensor step(LossClosure closure = nullptr) override {
    ++*count_;
    return torch::optim::SGD::step(std::move(closure));
  }
  int* count_;
};

TEST(SpeedProbe, StepsTheOptimizerTheRunWillStep) {
  // train's fused Adam changes a step's cost (1.4-2x on CUDA): the probe times the run's own.
  int steps = 0;
  const SpeedProbe probe =
      probe_training_speed(tiny_resnet(), 16, nn::Precision::FP32, nn::Kernels::TORCH, torch::kCPU, 0.05,
                           [&](nn::PolicyNet& net) { return std::make_unique<CountingSgd>(net.parameters(), &steps); });
  EXPECT_GT(steps, probe.steps) << "the warm-up and the timed steps";
}

TEST(SpeedProbe, StepsWithinABudget) {
  SpeedProbe p;
  p.samples_per_second = 2560;  // 10 steps of 256 a second
  EXPECT_EQ(steps_within(60, p, 256, 1.0), 600);
  EXPECT_EQ(steps_within(60, p, 256, 0.9), 540);
  EXPECT_EQ(steps_within(0.001, p, 256, 0.9), 1);  // never zero steps
}

}  // namespace
}  // namespace legalnet::train
