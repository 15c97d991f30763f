// train's Adam and AdamW (run/train/optimizer.h: torch's fused kernels behind torch::optim's
// classes) against torch::optim::Adam and AdamW themselves: the same parameters and state after
// several steps, for a channels-last weight, a vector and a parameter without a gradient.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "compute/device.h"
#include "nn/forward.h"
#include "nn/models.h"
#include "run/train/optimizer.h"

namespace legalnet::run {
namespace {

std::vector<torch::Tensor> fresh_parameters(torch::Device device = torch::kCPU) {
  torch::manual_seed(7);
  std::vector<torch::Tensor> params{torch::randn({32, 16, 3, 3}).contiguous(torch::MemoryFormat::ChannelsLast),
                                    torch::randn({32}), torch::randn({5})};
  for (auto& p : params) p = p.to(device).requires_grad_(true);
  return params;
}

template <typename Options>
using StateOf = std::conditional_t<std::is_same_v<Options, torch::optim::AdamWOptions>, torch::optim::AdamWParamState,
                                   torch::optim::AdamParamState>;

// How a run goes: the gradients' layout, the device, a jump of every state's step (as a loaded
// checkpoint would set it) after the third step.
struct RunSetup {
  bool nchw_gradient = false;
  torch::Device device = torch::kCPU;
  int64_t jump_to = 0;
};

// Runs `steps` steps with the same random gradients (none for the last parameter) and returns the
// parameters, then each stepped parameter's exp_avg, exp_avg_sq and step.
// `nchw_gradient`: the channels-last weight gets its gradient in the default layout (the fused
// kernel would read it in the wrong order; the optimizer must step it through torch::optim's).
template <typename Optimizer, typename Options>
std::vector<torch::Tensor> run(Options options, int steps, const RunSetup& how) {
  auto params = fresh_parameters(how.device);
  Optimizer optimizer(params, options);
  torch::manual_seed(8);
  for (int s = 0; s < steps; ++s) {
    optimizer.zero_grad();
    for (size_t i = 0; i + 1 < params.size(); ++i)
      params[i].mutable_grad() =
          torch::randn(params[i].sizes()).to(how.device).contiguous(params[i].suggest_memory_format());
    if (how.nchw_gradient) params[0].mutable_grad() = params[0].grad().contiguous();
    optimizer.step();
    if (s == 2 && how.jump_to > 0)
      for (auto& [key, state] : optimizer.state()) static_cast<StateOf<Options>&>(*state).step(how.jump_to);
  }
  if constexpr (!std::is_same_v<Optimizer, torch::optim::Adam> && !std::is_same_v<Optimizer, torch::optim::AdamW>) {
    if (!how.nchw_gradient) {
      EXPECT_EQ(optimizer.fused_steps(), steps) << "every step through the fused kernel";
    }
  }
  std::vector<torch::Tensor> out;
  for (const auto& p : params) out.push_back(p.cpu());
  for (size_t i = 0; i + 1 < params.size(); ++i) {
    const auto& s = static_cast<const StateOf<Options>&>(*optimizer.state().at(params[i].unsafeGetTensorImpl()));
    out.push_back(s.exp_avg().cpu());
    out.push_back(s.exp_avg_sq().cpu());
    out.push_back(torch::tensor(double(s.step())));
  }
  EXPECT_FALSE(optimizer.state().count(params.back().unsafeGetTensorImpl())) << "a parameter without a gradient";
  return out;
}

template <typename Fused, typename Torch, typename Options>
void compare(const char* name, Options options, const RunSetup& how = {}) {
  const std::vector<torch::Tensor> fused = run<Fused>(options, 6, how), reference = run<Torch>(options, 6, how);
  ASSERT_EQ(fused.size(), reference.size());
  double worst = 0;
  for (size_t i = 0; i < fused.size(); ++i) {
    const double error =
        (fused[i] - reference[i]).abs().max().item<double>() / std::max(1e-12, reference[i].abs().max().item<double>());
    EXPECT_LT(error, 1e-5) << name << ", result " << i;
    worst = std::max(worst, error);
  }
  // The step changed the weights at all (a comparison of two unchanged copies would pass).
  EXPECT_GT((fused[0] - fresh_parameters()[0]).abs().max().item<double>(), 1e-3) << name;
  fmt::print("{} through the fused kernel against torch::optim's: largest relative difference {:.2g}\n", name, worst);
}

TEST(Optimizer, FusedAdamStepsAsTorchsAdam) {
  compare<FusedAdam<torch::optim::Adam>, torch::optim::Adam>("Adam",
                                                             torch::optim::AdamOptions(1e-2).weight_decay(1e-2));
}

TEST(Optimizer, FusedAdamWStepsAsTorchsAdamW) {
  compare<FusedAdam<torch::optim::AdamW>, torch::optim::AdamW>("AdamW",
                                                               torch::optim::AdamWOptions(1e-2).weight_decay(1e-2));
}

TEST(Optimizer, AGradientInAnotherLayoutStepsAsTorchsAdam) {
  compare<FusedAdam<torch::optim::Adam>, torch::optim::Adam>(
      "Adam, an NCHW gradient", torch::optim::AdamOptions(1e-2).weight_decay(1e-2), {.nchw_gradient = true});
}

TEST(Optimizer, AStepSetFromOutsideIsTheOneTheKernelUses) {
  // As a loaded checkpoint sets it: the bias corrections follow the state's step.
  compare<FusedAdam<torch::optim::Adam>, torch::optim::Adam>("Adam, a step jumped to 1000",
                                                             torch::optim::AdamOptions(1e-2), {.jump_to = 1000});
}

TEST(Optimizer, FusedAdamOnCudaStepsAsTorchsAdam) {
  if (!nn::pick_device("auto").is_cuda()) GTEST_SKIP() << "no CUDA device";
  const RunSetup on_cuda{.device = torch::Device(torch::kCUDA)};
  compare<FusedAdam<torch::optim::Adam>, torch::optim::Adam>(
      "Adam on CUDA", torch::optim::AdamOptions(1e-2).weight_decay(1e-2), on_cuda);
  compare<FusedAdam<torch::optim::AdamW>, torch::optim::AdamW>(
      "AdamW on CUDA", torch::optim::AdamWOptions(1e-2).weight_decay(1e-2), on_cuda);
  compare<FusedAdam<torch::optim::Adam>, torch::optim::Adam>("Adam on CUDA, a step jumped to 1000",
                                                             torch::optim::AdamOptions(1e-2),
                                                             {.device = torch::Device(torch::kCUDA), .jump_to = 1000});
}

TEST(Optimizer, TheDefaultNetStepsThroughTheFusedKernel) {
  // The resnet as train makes it (channels-last on a CPU, the board kernels' own gradients): every
  // parameter's gradient in its layout, so the step is the fused one, not the fallback.
  nn::ModelConfig config;
  config.policy_head = nn::PolicyHead::PAIRS;
  auto net = nn::make_model(config.resolved());
  nn::choose_memory_format(*net);
  net->use_kernels(nn::Kernels::BOARD);
  FusedAdam<torch::optim::Adam> optimizer(net->parameters(), torch::optim::AdamOptions(1e-3));
  const auto planes =
      torch::rand({4, config.resolved().input_planes(), 8, 8}).round().contiguous(torch::MemoryFormat::ChannelsLast);
  for (int step = 0; step < 2; ++step) {
    optimizer.zero_grad();
    net->forward_trained(planes).square().mean().backward();
    optimizer.step();
  }
  EXPECT_EQ(optimizer.fused_steps(), 2);
}

}  // namespace
}  // namespace legalnet::run
