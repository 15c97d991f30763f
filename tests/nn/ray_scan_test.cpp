// The ray scan of --mixing rays: the board kernel (kernels/kernels.h) and torch's doubling steps
// (RayScanImpl::scan_torch) against the definition summed square by square, forward and gradients,
// and what it is for: a line that stops at the first blocker.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include "kernels/kernels.h"
#include "nn/models.h"
#include "relative_error.h"  // tests/nn/

namespace legalnet::nn {
namespace {

// h[b][s][d][r] = sum over k >= 1 of v[s - k d] times the gates of s - d .. s - (k-1) d, summed
// square by square in fp64 (the kernels' header's definition, read literally).
torch::Tensor definition(const torch::Tensor& values, const torch::Tensor& gates) {
  const auto v = values.to(torch::kDouble), g = gates.to(torch::kDouble);
  const int64_t boards = v.size(0), r = v.size(2);
  auto h = torch::zeros({boards, 64, 8, r}, torch::kDouble);
  for (int s = 0; s < 64; ++s)
    for (size_t d = 0; d < RAY_DIRECTIONS.size(); ++d) {
      auto gain = torch::ones({boards, r}, torch::kDouble), sum = torch::zeros({boards, r}, torch::kDouble);
      for (int k = 1; k < 8; ++k) {
        const int rank = s / 8 - k * RAY_DIRECTIONS[d][0], file = s % 8 - k * RAY_DIRECTIONS[d][1];
        if (rank < 0 || rank > 7 || file < 0 || file > 7) break;
        sum = sum + gain * v.select(1, rank * 8 + file);
        gain = gain * g.select(1, rank * 8 + file);
      }
      h.select(1, s).select(1, int64_t(d)).copy_(sum);
    }
  return h;
}

// The projection the board kernel takes: values, then gate logits.
torch::Tensor projection(const torch::Tensor& values, const torch::Tensor& logits) {
  return torch::cat({values, logits}, 2).contiguous();
}

TEST(RayScan, BothScansAreTheDefinitionWithItsGradients) {
  torch::manual_seed(11);
  RayScan module(8);
  for (const auto& [boards, r] : {std::pair{1, 1}, {3, 4}, {17, 8}, {5, 16}, {2, 32}, {4, 7}}) {
    const std::string what = fmt::format("{} boards, {} rays", boards, r);
    const auto v0 = torch::randn({boards, 64, r}), l0 = 2 * torch::randn({boards, 64, r});
    const auto dh = torch::randn({boards, 64, 8, r}, torch::kDouble);
    // The fp64 reference: the definition and its autograd gradients.
    auto v_ref = v0.to(torch::kDouble).requires_grad_(true), l_ref = l0.to(torch::kDouble).requires_grad_(true);
    const auto reference = definition(v_ref, torch::sigmoid(l_ref));
    reference.backward(dh);
    const auto grad_ref = projection(v_ref.grad(), l_ref.grad());
    for (const bool board : {true, false}) {
      auto in = projection(v0, l0).requires_grad_(true);
      ASSERT_TRUE(board_ray_scan_applies(in));
      const auto h =
          board ? board_ray_scan(in) : module->scan_torch(in.narrow(2, 0, r), torch::sigmoid(in.narrow(2, r, r)));
      h.backward(dh.to(torch::kFloat));
      const std::string who = what + (board ? ", board kernel" : ", torch's ops");
      ASSERT_EQ(h.sizes(), reference.sizes()) << who;
      EXPECT_LT(relative_error(h, reference), 1e-5) << who;
      EXPECT_LT(relative_error(in.grad().narrow(2, 0, r), grad_ref.narrow(2, 0, r)), 1e-5) << who << ": values'";
      EXPECT_LT(relative_error(in.grad().narrow(2, r, r), grad_ref.narrow(2, r, r)), 1e-5) << who << ": gates'";
    }
  }
}

TEST(RayScan, TheComparisonSeesAWrongGate) {
  // The check above fails when one gate is off: the comparison can fail.
  torch::manual_seed(12);
  const auto v = torch::randn({2, 64, 4}), l = torch::randn({2, 64, 4});
  auto wrong = l.clone();
  wrong[1][27][2] += 1.0f;  // d4, ray 2
  EXPECT_GT(relative_error(board_ray_scan(projection(v, wrong)), definition(v, torch::sigmoid(l))), 1e-3);
}

// With every value 1 and every gate open but one square's, a square sees along each direction the
// squares up to and including that blocker, and none behind it: a slider's reach.
TEST(RayScan, ALineStopsAtTheFirstBlocker) {
  const auto v = torch::ones({1, 64, 1});
  auto logits = torch::full({1, 64, 1}, 100.0f);  // open: sigmoid 1 in fp32
  const int d4 = 3 * 8 + 3, g7 = 6 * 8 + 6, h8 = 7 * 8 + 7, d8 = 7 * 8 + 3;
  logits[0][d4][0] = -200.0f;  // closed: sigmoid 0
  const auto h = board_ray_scan(projection(v, logits));
  const auto reach = [&](int square, int dr, int df) {
    for (size_t d = 0; d < RAY_DIRECTIONS.size(); ++d)
      if (RAY_DIRECTIONS[d][0] == dr && RAY_DIRECTIONS[d][1] == df) return h[0][square][int64_t(d)][0].item<float>();
    return -1.0f;
  };
  EXPECT_EQ(reach(g7, 1, 1), 3.0f);         // f6, e5, d4: c3, b2, a1 lie behind the blocker
  EXPECT_EQ(reach(h8, 1, 1), 4.0f);         // g7, f6, e5, d4
  EXPECT_EQ(reach(d8, 1, 0), 4.0f);         // d7, d6, d5, d4 up the file
  EXPECT_EQ(reach(d4, 1, 1), 3.0f);         // the blocker itself sees c3, b2, a1
  EXPECT_EQ(reach(7 * 8 + 0, 1, 0), 7.0f);  // a8: the a-file is open
  EXPECT_EQ(reach(0, 1, 0), 0.0f);          // a1: nothing below the first rank
  // torch's doubling steps see the same.
  EXPECT_TRUE(torch::equal(RayScan(4)->scan_torch(v, torch::sigmoid(logits)), h));
}

TEST(RayScan, LeavesOtherShapesAndTypesToTorch) {
  const auto p = torch::randn({2, 64, 8});
  EXPECT_TRUE(board_ray_scan_applies(p));
  EXPECT_FALSE(board_ray_scan_applies(p.to(torch::kDouble)));                       // fp64
  EXPECT_FALSE(board_ray_scan_applies(p.to(torch::kBFloat16)));                     // bf16
  EXPECT_FALSE(board_ray_scan_applies(torch::randn({2, 32, 8})));                   // not 64 squares
  EXPECT_FALSE(board_ray_scan_applies(torch::randn({2, 64, 5})));                   // values and gates unpaired
  EXPECT_FALSE(board_ray_scan_applies(torch::randn({2, 64, 16}).narrow(2, 0, 8)));  // not contiguous
  EXPECT_THROW(board_ray_scan(torch::randn({2, 64, 5})), c10::Error);
}

// The module on either scan, in channels-last as training runs it: the same output and
// parameter gradients.
TEST(RayScan, TheModuleGivesTheSameOnTheBoardKernelAndOnTorch) {
  torch::manual_seed(13);
  RayScan module(16);
  const auto x = torch::randn({9, 16, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast);
  std::vector<torch::Tensor> outs, grads;
  for (const Kernels k : {Kernels::BOARD, Kernels::TORCH}) {
    module->zero_grad();
    const auto y = module->forward(x, k);
    (y * y).sum().backward();
    outs.push_back(y);
    grads.push_back(torch::cat({module->project->weight.grad().flatten(), module->project->bias.grad(),
                                module->out->weight.grad().flatten()}));
  }
  EXPECT_TRUE(torch::allclose(outs[0], outs[1], 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(grads[0], grads[1], 1e-4, 1e-4));
}

}  // namespace
}  // namespace legalnet::nn
