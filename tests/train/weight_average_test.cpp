// train/weight_average: --ema's moving average of the weights.
#include "train/weight_average.h"

#include <gtest/gtest.h>

namespace legalnet::train {
namespace {

struct Net : torch::nn::Module {
  Net() {
    linear = register_module("linear", torch::nn::Linear(3, 2));
    norm = register_module("norm", torch::nn::BatchNorm1d(2));
  }
  torch::nn::Linear linear{nullptr};
  torch::nn::BatchNorm1d norm{nullptr};
};

TEST(WeightAverage, TheDecayRampsUpToItsValue) {
  Net net;
  const WeightAverage average(net, 0.999);
  EXPECT_DOUBLE_EQ(average.decay_at(0), 0.1);
  EXPECT_DOUBLE_EQ(average.decay_at(10), 11.0 / 20.0);
  EXPECT_DOUBLE_EQ(average.decay_at(1000000), 0.999);
}

TEST(WeightAverage, FollowsTheWeightsAndSwapsThemInAndOut) {
  torch::manual_seed(3);
  Net net;
  torch::NoGradGuard no_grad;
  const torch::Tensor start = net.linear->weight.clone();
  WeightAverage average(net, 0.9);
  // The weights jump by 1; after one update at step s the average moved (1 - d(s)) of the way.
  net.linear->weight.add_(1.0);
  net.norm->running_mean.fill_(2.0);
  average.update(100);
  const double d = average.decay_at(100);
  ASSERT_DOUBLE_EQ(d, 0.9);
  const torch::Tensor live = net.linear->weight.clone();
  const torch::Tensor tracked = net.norm->num_batches_tracked.clone();

  average.swap();  // the average in the net
  EXPECT_TRUE(torch::allclose(net.linear->weight, start + (1 - d), 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(net.norm->running_mean, torch::full({2}, 2.0 * (1 - d)), 1e-6, 1e-6));
  EXPECT_TRUE(torch::equal(net.norm->num_batches_tracked, tracked)) << "an integer buffer is not averaged";
  EXPECT_TRUE(net.linear->weight.requires_grad()) << "the parameter stays a parameter";

  average.swap();  // and back
  EXPECT_TRUE(torch::equal(net.linear->weight, live));
  EXPECT_TRUE(torch::allclose(net.norm->running_mean, torch::full({2}, 2.0)));

  // Many updates at constant weights bring the average to them.
  for (int64_t step = 101; step < 400; ++step) average.update(step);
  average.swap();
  EXPECT_TRUE(torch::allclose(net.linear->weight, live, 1e-5, 1e-5));
}

}  // namespace
}  // namespace legalnet::train
