// The ray scan layer of --mixing rays: the board kernel (kernels/kernels.h: board_ray_layer) and
// torch's ops (RayScanImpl::scan_torch with the two linear maps) against the definition summed
// square by square, forward and gradients, and what it is for: a line that stops at the first
// blocker.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include <fmt/core.h>

#include "kernels/kernels.h"
#include "nn/models.h"
#include "relative_error.h"  // tests/nn/

namespace legalnet::nn {
namespace {

// h[b][s][d][r] = sum over k >= 1 of v[s - k d] times the gates of s - d .. s - (k-1) d, summed
// square by square (the kernels' header's definition, read literally).
torch::Tensor definition(const torch::Tensor& v, const torch::Tensor& g) {
  const int64_t boards = v.size(0), r = v.size(2);
  auto h = torch::zeros({boards, 64, 8, r}, v.options());
  for (int s = 0; s < 64; ++s)
    for (size_t d = 0; d < RAY_DIRECTIONS.size(); ++d) {
      auto gain = torch::ones({boards, r}, v.options()), sum = torch::zeros({boards, r}, v.options());
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

// The layer's parameters [W_p, b_p, W_o] for C channels and R rays, random.
std::vector<torch::Tensor> parameters(int64_t c, int64_t r) {
  return {torch::randn({2 * r, c}) / std::sqrt(double(c)), torch::randn({2 * r}),
          torch::randn({c, 8 * r}) / std::sqrt(double(8 * r))};
}

// x + (scan of x W_p^T + b_p) W_o^T over x [B,64,C], with `scan` the definition or torch's ops.
template <typename Scan>
torch::Tensor layer(const torch::Tensor& x, const std::vector<torch::Tensor>& p, Scan scan) {
  const int64_t r = p[1].size(0) / 2;
  const auto projected = torch::matmul(x, p[0].t()) + p[1];
  const auto h = scan(projected.narrow(2, 0, r), torch::sigmoid(projected.narrow(2, r, r)));
  return x + torch::matmul(h.reshape({x.size(0), 64, 8 * r}), p[2].t());
}

std::vector<torch::Tensor> requiring_grad(const std::vector<torch::Tensor>& ts, torch::ScalarType type) {
  std::vector<torch::Tensor> out;
  for (const auto& t : ts) out.push_back(t.to(type).detach().requires_grad_(true));
  return out;
}

TEST(RayScan, BothLayersAreTheDefinitionWithItsGradients) {
  torch::manual_seed(11);
  RayScan module(8);  // its gathers only: scan_torch takes any width
  const std::vector<std::string> names{"x", "W_p", "b_p", "W_o"};
  for (const auto& [boards, c, r] : {std::tuple{1, 16, 8}, {17, 32, 8}, {5, 32, 16}, {2, 64, 32}, {3, 48, 8}}) {
    const std::string what = fmt::format("{} boards, {} channels, {} rays", boards, c, r);
    std::vector<torch::Tensor> inputs{torch::randn({boards, 64, c})};
    for (const auto& p : parameters(c, r)) inputs.push_back(p);
    inputs[2] = 2 * inputs[2];  // gates from nearly shut to nearly open
    const auto dy = torch::randn({boards, 64, c}, torch::kDouble);
    // The fp64 reference: the definition and its autograd gradients.
    auto ref = requiring_grad(inputs, torch::kDouble);
    const auto reference = layer(ref[0], {ref[1], ref[2], ref[3]}, definition);
    reference.backward(dy);
    for (const bool board : {true, false}) {
      auto in = requiring_grad(inputs, torch::kFloat);
      const bool applies = board_ray_layer_applies(in[0], in[1], in[2], in[3]);
      ASSERT_EQ(applies, c % 16 == 0) << what;  // 48 channels: not a multiple of 16
      if (board && !applies) continue;
      const auto y = board ? board_ray_layer(in[0], in[1], in[2], in[3])
                           : layer(in[0], {in[1], in[2], in[3]},
                                   [&](const auto& v, const auto& g) { return module->scan_torch(v, g); });
      y.backward(dy.to(torch::kFloat));
      const std::string who = what + (board ? ", board kernel" : ", torch's ops");
      ASSERT_EQ(y.sizes(), reference.sizes()) << who;
      EXPECT_LT(relative_error(y, reference), 1e-5) << who;
      for (size_t i = 0; i < in.size(); ++i)
        EXPECT_LT(relative_error(in[i].grad(), ref[i].grad()), 1e-5) << who << ": " << names[i] << "'s gradient";
    }
  }
}

TEST(RayScan, TheComparisonSeesAWrongGate) {
  // The check above fails when one gate is off: the comparison can fail.
  torch::manual_seed(12);
  const auto x = torch::randn({2, 64, 16});
  const auto p = parameters(16, 8);
  auto wrong = p[1].clone();
  wrong[8 + 2] += 1.0f;  // the third gate's bias, on every square
  EXPECT_GT(relative_error(board_ray_layer(x, p[0], wrong, p[2]), layer(x, p, definition)), 1e-3);
}

// With every value 1 and every gate open but one square's, a square sees along each direction the
// squares up to and including that blocker, and none behind it: a slider's reach. Channel 0 of x
// is the value, channel 1 the gate logit; out channel 8 + d reads h[d] of ray 0.
TEST(RayScan, ALineStopsAtTheFirstBlocker) {
  RayScan module(32);
  ASSERT_EQ(module->rays, 8);
  auto x = torch::zeros({1, 64, 32});
  x.select(2, 0).fill_(1.0f);
  x.select(2, 1).fill_(100.0f);  // open: sigmoid 1 in fp32
  const int d4 = 3 * 8 + 3, g7 = 6 * 8 + 6, h8 = 7 * 8 + 7, d8 = 7 * 8 + 3;
  x[0][d4][1] = -200.0f;  // closed: sigmoid 0
  {
    torch::NoGradGuard no_grad;
    module->project->weight.zero_();
    module->project->bias.zero_();
    module->out->weight.zero_();
    module->project->weight[0][0] = 1.0f;  // value of ray 0 = channel 0
    module->project->weight[8][1] = 1.0f;  // gate logit of ray 0 = channel 1
    for (int d = 0; d < 8; ++d) module->out->weight[8 + d][d * 8] = 1.0f;
  }
  const auto planes = x.view({1, 8, 8, 32}).permute({0, 3, 1, 2});  // channels-last [1,32,8,8]
  const auto h = module->forward(planes, Kernels::BOARD).permute({0, 2, 3, 1}).reshape({64, 32}).narrow(1, 8, 8);
  const auto reach = [&](int square, int dr, int df) {
    for (size_t d = 0; d < RAY_DIRECTIONS.size(); ++d)
      if (RAY_DIRECTIONS[d][0] == dr && RAY_DIRECTIONS[d][1] == df) return h[square][int64_t(d)].item<float>();
    return -1.0f;
  };
  EXPECT_EQ(reach(g7, 1, 1), 3.0f);         // f6, e5, d4: c3, b2, a1 lie behind the blocker
  EXPECT_EQ(reach(h8, 1, 1), 4.0f);         // g7, f6, e5, d4
  EXPECT_EQ(reach(d8, 1, 0), 4.0f);         // d7, d6, d5, d4 up the file
  EXPECT_EQ(reach(d4, 1, 1), 3.0f);         // the blocker itself sees c3, b2, a1
  EXPECT_EQ(reach(7 * 8 + 0, 1, 0), 7.0f);  // a8: the a-file is open
  EXPECT_EQ(reach(0, 1, 0), 0.0f);          // a1: nothing below the first rank
  // torch's doubling steps see the same.
  EXPECT_TRUE(torch::equal(module->forward(planes, Kernels::TORCH), module->forward(planes, Kernels::BOARD)));
}

TEST(RayScan, LeavesOtherShapesAndTypesToTorch) {
  const auto x = torch::randn({2, 64, 32});
  const auto p = parameters(32, 8);
  const auto applies = [&](const torch::Tensor& squares, const std::vector<torch::Tensor>& w) {
    return board_ray_layer_applies(squares, w[0], w[1], w[2]);
  };
  EXPECT_TRUE(applies(x, p));
  EXPECT_FALSE(applies(x.to(torch::kDouble), p));                        // fp64
  EXPECT_FALSE(applies(x.to(torch::kBFloat16), p));                      // bf16
  EXPECT_FALSE(applies(x, {p[0].to(torch::kDouble), p[1], p[2]}));       // fp64 weights
  EXPECT_FALSE(applies(torch::randn({2, 32, 32}), p));                   // not 64 squares
  EXPECT_FALSE(applies(torch::randn({2, 64, 64}).narrow(2, 0, 32), p));  // not contiguous
  EXPECT_FALSE(applies(torch::randn({2, 64, 24}), parameters(24, 8)));   // 24 channels
  EXPECT_FALSE(applies(x, parameters(32, 4)));                           // 4 rays
  EXPECT_FALSE(applies(x, {p[0], p[1], torch::randn({32, 32})}));        // W_o not [C, 8R]
  EXPECT_FALSE(applies(x, {p[0], torch::randn({8}), p[2]}));             // b_p not [2R]
  {
    at::autocast::set_autocast_enabled(torch::kCPU, true);
    EXPECT_FALSE(applies(x, p));  // autocast would lower the products: torch's
    at::autocast::set_autocast_enabled(torch::kCPU, false);
  }
  EXPECT_THROW(board_ray_layer(torch::randn({2, 64, 24}), p[0], p[1], p[2]), c10::Error);
}

// The module on either path, in channels-last as training runs it: the same output and
// parameter gradients, at the widths the board kernel has.
TEST(RayScan, TheModuleGivesTheSameOnTheBoardKernelAndOnTorch) {
  torch::manual_seed(13);
  for (const int channels : {32, 64}) {
    RayScan module(channels);
    const auto x = torch::randn({9, channels, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
    ASSERT_TRUE(board_ray_layer_applies(x.permute({0, 2, 3, 1}).reshape({9, 64, channels}), module->project->weight,
                                        module->project->bias, module->out->weight));
    std::vector<torch::Tensor> outs, grads;
    for (const Kernels k : {Kernels::BOARD, Kernels::TORCH}) {
      module->zero_grad();
      x.mutable_grad() = torch::Tensor();
      const auto y = module->forward(x, k);
      (y * y).sum().backward();
      outs.push_back(y);
      grads.push_back(torch::cat({x.grad().flatten(), module->project->weight.grad().flatten(),
                                  module->project->bias.grad(), module->out->weight.grad().flatten()}));
    }
    EXPECT_TRUE(torch::allclose(outs[0], outs[1], 1e-5, 1e-5)) << channels;
    EXPECT_TRUE(torch::allclose(grads[0], grads[1], 1e-4, 1e-4)) << channels;
  }
}

}  // namespace
}  // namespace legalnet::nn
