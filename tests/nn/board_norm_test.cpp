// The board kernels' batch norm + residual + ReLU (kernels/kernels.h) against torch's BatchNorm2d,
// add and relu: the output, every gradient and the running statistics, for random shapes and
// values.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <fmt/core.h>

#include "kernels/kernels.h"
#include "nn/forward.h"
#include "nn/models.h"
#include "relative_error.h"  // tests/nn/

namespace legalnet::nn {
namespace {

struct Case {
  int64_t boards, channels;
  bool residual;
  double offset;  // added to x: the variance must not cancel when the mean is far from 0
};

// What one run gives: the output, the gradients of x, weight, bias and residual, the running
// statistics after it.
using Results = std::vector<torch::Tensor>;
const char* const RESULT_NAMES[] = {"output",          "input gradient",    "weight gradient",
                                    "bias gradient",   "residual gradient", "running mean",
                                    "running variance"};

// A copy of the module in the given type.
torch::nn::BatchNorm2d copy_of(const torch::nn::BatchNorm2d& norm, torch::Dtype type) {
  torch::nn::BatchNorm2d copy(norm->options);
  copy->to(type);
  torch::NoGradGuard no_grad;
  for (const auto& p : norm->named_parameters()) copy->named_parameters()[p.key()].copy_(p.value());
  for (const auto& b : norm->named_buffers()) copy->named_buffers()[b.key()].copy_(b.value());
  return copy;
}

// norm, add and relu by torch's ops in the given type (or by the board kernels).
Results run(const torch::nn::BatchNorm2d& original, const torch::Tensor& x0, const torch::Tensor& r0,
            const torch::Tensor& gy, bool residual, torch::Dtype type, bool board) {
  auto norm = copy_of(original, type);
  const auto layout = [&](const torch::Tensor& t) {  // a copy: the caller's tensors stay without grad
    return t.to(type, /*non_blocking=*/false, /*copy=*/true).contiguous(torch::MemoryFormat::ChannelsLast);
  };
  auto x = layout(x0).requires_grad_(true), r = layout(r0).requires_grad_(true);
  torch::Tensor y;
  if (board) {
    EXPECT_TRUE(board_norm_applies(x, *norm));
    y = board_norm_relu(x, *norm, residual ? r : torch::Tensor());
  } else {
    const auto normed = norm(x);
    y = torch::relu(residual ? r + normed : normed);
  }
  y.backward(gy.to(type));
  EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_EQ(r.grad().defined(), residual);
  return {y,
          x.grad(),
          norm->weight.grad(),
          norm->bias.grad(),
          residual ? r.grad() : torch::ones({1}),
          norm->running_mean.clone(),
          norm->running_var.clone()};
}

// Ours against an fp64 reference, within 1e-5 relative or 4x the error of torch's own fp32 ops
// (with a large offset, x - mean loses digits in any fp32 arithmetic).
void check(const Case& c) {
  const std::string what = fmt::format("{} boards, {} channels{}, offset {}", c.boards, c.channels,
                                       c.residual ? ", residual" : "", c.offset);
  // Values that fp32 holds exactly, so that the error measured is the arithmetic's.
  auto exact = [](const torch::Tensor& t) { return t.to(torch::kFloat).to(torch::kDouble); };
  const auto x0 = exact(torch::randn({c.boards, c.channels, 8, 8}, torch::kDouble) * 3 + c.offset);
  const auto r0 = exact(torch::randn({c.boards, c.channels, 8, 8}, torch::kDouble));
  const auto gy = exact(torch::randn({c.boards, c.channels, 8, 8}, torch::kDouble));
  torch::nn::BatchNorm2d norm(c.channels);
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(torch::randn({c.channels}));
    norm->bias.copy_(torch::randn({c.channels}));
    norm->running_mean.copy_(torch::randn({c.channels}));
  }
  const auto reference = run(norm, x0, r0, gy, c.residual, torch::kDouble, false);
  const auto torch_fp32 = run(norm, x0, r0, gy, c.residual, torch::kFloat, false);
  const auto ours = run(norm, x0, r0, gy, c.residual, torch::kFloat, true);
  for (size_t i = 0; i < reference.size(); ++i) {
    const double tolerance = std::max(1e-5, 4 * relative_error(torch_fp32[i], reference[i]));
    EXPECT_LT(relative_error(ours[i], reference[i]), tolerance) << what << ": " << RESULT_NAMES[i];
  }
}

TEST(BoardNorm, MatchesTorchsNormAddAndReluWithTheirGradients) {
  torch::manual_seed(36);
  for (const Case& c : {Case{1, 1, false, 0}, Case{4, 32, true, 0}, Case{37, 32, false, 0}, Case{37, 32, true, 0},
                        Case{5, 7, true, 40}, Case{3, 45, false, -250}, Case{9, 16, true, 1000}})
    check(c);
}

// A wrong answer that the comparison must catch: the check is not vacuous.
TEST(BoardNorm, TheComparisonSeesAWrongBias) {
  torch::nn::BatchNorm2d norm(8);
  const auto x = torch::randn({4, 8, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast);
  const auto expected =
      torch::relu(torch::batch_norm(x, norm->weight, norm->bias + 0.01, {}, {}, true, 0.1, 1e-5, false));
  EXPECT_GT(relative_error(board_norm_relu(x, *norm), expected), 1e-3);
}

// The chunks' sums are combined in order whatever the thread count: the same bytes.
TEST(BoardNorm, TheSameBytesForAnyThreadCount) {
  torch::manual_seed(7);
  const auto x0 = torch::randn({37, 32, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast);
  const auto r0 = torch::randn_like(x0), gy = torch::randn_like(x0);
  auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    torch::nn::BatchNorm2d norm(32);
    auto x = x0.clone().requires_grad_(true), r = r0.clone().requires_grad_(true);
    const auto y = board_norm_relu(x, *norm, r);
    y.backward(gy);
    at::set_num_threads(before);
    return std::vector<torch::Tensor>{
        y, x.grad(), r.grad(), norm->weight.grad(), norm->bias.grad(), norm->running_mean, norm->running_var};
  };
  const auto a = run(2), b = run(1);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
}

TEST(BoardNorm, LeavesEvaluationWithGradientsOtherLayoutsAndPrecisionsToTorch) {
  torch::nn::BatchNorm2d norm(8);
  const auto x = torch::randn({2, 8, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(board_norm_applies(x, *norm));
  EXPECT_FALSE(board_norm_applies(x.contiguous(), *norm));
  EXPECT_FALSE(board_norm_applies(x.to(torch::kDouble), *norm));
  EXPECT_FALSE(board_norm_applies(torch::randn({2, 4, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast), *norm));
  norm->eval();
  EXPECT_FALSE(board_norm_applies(x, *norm));  // evaluation mode has no backward of ours
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(board_norm_applies(x, *norm));
  EXPECT_FALSE(board_norm_applies(x.contiguous(), *norm));
}

// Evaluation mode (inference): the running statistics as torch's BatchNorm2d reads them, the
// residual and the ReLU, against an fp64 reference; the module's state is left as it was.
TEST(BoardNorm, EvaluationModeMatchesTorchsNormAddAndRelu) {
  torch::manual_seed(11);
  for (const Case& c : {Case{1, 1, false, 0}, Case{37, 32, true, 0}, Case{5, 7, true, 40}, Case{9, 16, false, -30}}) {
    torch::nn::BatchNorm2d norm(c.channels);
    {
      torch::NoGradGuard no_grad;
      norm->weight.copy_(torch::randn({c.channels}));
      norm->bias.copy_(torch::randn({c.channels}));
      norm->running_mean.copy_(torch::randn({c.channels}) + c.offset);
      norm->running_var.copy_(torch::rand({c.channels}) * 4 + 0.1);
    }
    norm->eval();
    const auto x =
        (torch::randn({c.boards, c.channels, 8, 8}) * 3 + c.offset).contiguous(torch::MemoryFormat::ChannelsLast);
    const auto r = torch::randn_like(x);
    auto reference = copy_of(norm, torch::kDouble);
    reference->eval();
    const auto normed = reference(x.to(torch::kDouble));
    const auto expected = torch::relu(c.residual ? normed + r.to(torch::kDouble) : normed);
    const auto before = norm->running_mean.clone();
    torch::NoGradGuard no_grad;
    ASSERT_TRUE(board_norm_applies(x, *norm));
    const auto y = board_norm_relu(x, *norm, c.residual ? r : torch::Tensor());
    EXPECT_TRUE(y.is_contiguous(torch::MemoryFormat::ChannelsLast));
    EXPECT_LT(relative_error(y, expected), 1e-5) << c.boards << " boards, " << c.channels << " channels";
    EXPECT_TRUE(torch::equal(norm->running_mean, before));
    EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 0);
  }
}

// The default resnet trained one step with the board kernels (convolutions and norms) and with
// torch's, from the same weights: the logits, every parameter's gradient and the running
// statistics agree within 1e-4 (the Winograd convolutions round differently).
// A resnet's training step, every convolution, norm and (with the pairs head) the pair scores
// by the board kernels, against torch's: the logits, every gradient and the running statistics.
void check_resnet_step(PolicyHead policy_head) {
  ModelConfig config;
  config.policy_head = policy_head;
  const ModelConfig c = config.resolved();
  auto run = [&](Kernels kernels) {
    torch::manual_seed(3);
    auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(c));
    choose_memory_format(*net);
    net->use_kernels(kernels);
    net->train();
    torch::manual_seed(4);
    const auto planes = torch::rand({19, c.input_planes(), 8, 8}).round().contiguous(torch::MemoryFormat::ChannelsLast);
    const auto logits = net->forward_trained(planes);
    (logits * torch::randn_like(logits)).sum().backward();
    std::vector<torch::Tensor> results = {logits};
    for (const auto& p : net->parameters()) results.push_back(p.grad());
    for (const auto& b : net->buffers()) results.push_back(b.to(torch::kFloat));
    return results;
  };
  const auto torch_results = run(Kernels::TORCH), board_results = run(Kernels::BOARD);
  ASSERT_EQ(torch_results.size(), board_results.size());
  double worst = 0;
  for (size_t i = 0; i < torch_results.size(); ++i) {
    const double error = relative_error(board_results[i], torch_results[i]);
    EXPECT_LT(error, 1e-4) << "result " << i;
    worst = std::max(worst, error);
  }
  fmt::print("a resnet step ({} head), board against torch's kernels: largest relative error {:.2g}\n",
             choice_of(POLICY_HEADS, policy_head).name, worst);
}

TEST(BoardKernels, AResNetStepMatchesTorchs) { check_resnet_step(PolicyHead::TYPES); }

TEST(BoardKernels, AResNetStepWithThePairsHeadMatchesTorchs) { check_resnet_step(PolicyHead::PAIRS); }

}  // namespace
}  // namespace legalnet::nn
