// The board kernels (kernels/kernels.h) against torch's convolution: the output and the
// gradients of the input and the weights, for random shapes and values.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <fmt/core.h>

#include "compute/arithmetic.h"
#include "kernels/board_wgrad_bf16.h"
#include "kernels/kernels.h"
#include "kernels/tile_gemm.h"
#include "nn/model_config.h"
#include "relative_error.h"  // tests/nn/

namespace legalnet::nn {
namespace {

struct Case {
  int64_t boards, in, out;
  bool channels_last;
};

std::vector<Case> random_cases() {
  torch::manual_seed(32);
  std::vector<Case> cases = {{1, 1, 1, false}, {3, 32, 32, true}, {5, 18, 32, true}, {2, 7, 13, false}};
  for (int i = 0; i < 8; ++i) {
    const auto r = torch::randint(1, 48, {3});
    cases.push_back({r[0].item<int64_t>() % 9 + 1, r[1].item<int64_t>(), r[2].item<int64_t>(), i % 2 == 0});
  }
  return cases;
}

// Checks one case; returns its largest relative error.
double check(const Case& c, WinogradTile tile, double tolerance) {
  const auto x0 = torch::randn({c.boards, c.in, 8, 8}, torch::kDouble);
  const auto w0 = torch::randn({c.out, c.in, 3, 3}, torch::kDouble) / std::sqrt(9.0 * double(c.in));
  const auto gy = torch::randn({c.boards, c.out, 8, 8}, torch::kDouble);
  // The reference in fp64, so that the error measured is the board kernels' own.
  auto xr = x0.clone().requires_grad_(true), wr = w0.clone().requires_grad_(true);
  const auto yr = torch::conv2d(xr, wr, {}, 1, 1);
  yr.backward(gy);

  auto layout = [&](torch::Tensor t) {
    t = t.to(torch::kFloat);
    return c.channels_last ? t.contiguous(torch::MemoryFormat::ChannelsLast) : t.contiguous();
  };
  auto x = layout(x0).requires_grad_(true), w = layout(w0).requires_grad_(true);
  EXPECT_TRUE(board_conv_applies(x, w));
  const auto y = board_conv3x3(x, w, tile);
  y.backward(gy.to(torch::kFloat));
  const std::string what = fmt::format("{} boards, {} -> {} channels, F({}x{}){}", c.boards, c.in, c.out, int(tile),
                                       int(tile), c.channels_last ? ", channels-last" : "");
  EXPECT_EQ(y.sizes(), yr.sizes()) << what;
  EXPECT_LT(relative_error(y.to(torch::kDouble), yr), tolerance) << what << ": output";
  EXPECT_LT(relative_error(x.grad().to(torch::kDouble), xr.grad()), tolerance) << what << ": input gradient";
  EXPECT_LT(relative_error(w.grad().to(torch::kDouble), wr.grad()), tolerance) << what << ": weight gradient";
  return std::max({relative_error(y.to(torch::kDouble), yr), relative_error(x.grad().to(torch::kDouble), xr.grad()),
                   relative_error(w.grad().to(torch::kDouble), wr.grad())});
}

// Every case with each instruction set the CPU has (AVX-512, AVX2+FMA, the SSE baseline).
void check_all(WinogradTile tile, double tolerance) {
  const BoardIsa best = board_isa();
  for (const BoardIsa isa : {BoardIsa::AVX512, BoardIsa::AVX2, BoardIsa::BASELINE}) {
    if (isa > best) continue;
    board_isa_cap(isa);
    double worst = 0;
    for (const Case& c : random_cases()) worst = std::max(worst, check(c, tile, tolerance));
    fmt::print("F({0}x{0},3x3), {1}: largest relative error {2:.2g} (fp64 reference)\n", int(tile), board_isa_name(isa),
               worst);
  }
  board_isa_cap(BoardIsa::AVX512);
}

TEST(BoardConv, F2MatchesTorchsConvolutionAndItsGradients) { check_all(WinogradTile::F2, 1e-5); }

// F(4x4)'s transforms multiply by up to 8 and 1/24: its fp32 error is larger than F(2x2)'s,
// and still within the 1e-4 relative the training needs.
TEST(BoardConv, F4MatchesTorchsConvolutionAndItsGradients) { check_all(WinogradTile::F4, 1e-4); }

// A wrong answer that the comparison must catch: the check is not vacuous.
TEST(BoardConv, TheComparisonSeesAWrongWeight) {
  const auto x = torch::randn({2, 8, 8, 8}), w = torch::randn({8, 8, 3, 3});
  auto wrong = w.clone();
  wrong[3][5][1][2] += 0.1;
  EXPECT_GT(relative_error(board_conv3x3(x, wrong), torch::conv2d(x, w, {}, 1, 1)), 1e-3);
}

// Blocks of 4 boards split between threads: the weight gradient's partial sums are added in a
// fixed order, so one thread count gives the same bytes twice, and any count the same values
// within rounding.
TEST(BoardConv, TheSameBytesTwiceAndAnyThreadCount) {
  torch::manual_seed(5);
  const auto x0 = torch::randn({37, 32, 8, 8}), w0 = torch::randn({32, 32, 3, 3}) / 17.0;
  const auto gy = torch::randn({37, 32, 8, 8});
  auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    auto x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
    board_conv3x3(x, w).backward(gy);
    at::set_num_threads(before);
    return std::vector<torch::Tensor>{x.grad(), w.grad()};
  };
  const auto a = run(2), b = run(2), one = run(1);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
    fmt::print("threads 2 against 1, {}: relative difference {:.2g}\n", i == 0 ? "input gradient" : "weight gradient",
               relative_error(a[i], one[i]));
    // One thread sums the weight gradient's blocks in another order: each sum is within ~6e-6 of
    // fp64 (F4MatchesTorchsConvolutionAndItsGradients), so the two within twice that, or so
    // (1e-5 held with 8.6e-6 until the transforms' order of operations changed: 1.0006e-5).
    EXPECT_LT(relative_error(a[i], one[i]), 2e-5) << i;
  }
}

TEST(BoardConv, LeavesOtherShapesAndPrecisionsToTorch) {
  const auto w = torch::randn({8, 8, 3, 3});
  EXPECT_TRUE(board_conv_applies(torch::randn({2, 8, 8, 8}), w));
  EXPECT_FALSE(board_conv_applies(torch::randn({2, 8, 9, 9}), w));
  EXPECT_FALSE(board_conv_applies(torch::randn({2, 8, 8, 8}, torch::kDouble), w));
  EXPECT_FALSE(board_conv_applies(torch::randn({2, 8, 8, 8}), torch::randn({8, 8, 1, 1})));
  EXPECT_FALSE(board_conv_applies(torch::randn({2, 4, 8, 8}), w));
}

// train and evaluate resolve auto alike (nn::resolve_arithmetic): a resnet on a CPU with AVX2 and
// no AMX runs the board kernels in fp32; another kind of net, or --kernels torch, runs
// torch's in the CPU's native precision; CUDA keeps torch's.
TEST(BoardConv, ArithmeticFollowsTheNetAndTheCpu) {
  const Precision native = cpu_has_native_bf16() ? Precision::BF16 : Precision::FP32;
  const bool board = board_isa() >= BoardIsa::AVX2 && !cpu_has_amx_bf16();
  const Arithmetic resnet =
      resolve_arithmetic(Precision::AUTO, Kernels::AUTO, model_spec(ModelKind::RESNET).board_convolutions, torch::kCPU);
  EXPECT_EQ(resnet.precision, board ? Precision::FP32 : native);
  EXPECT_EQ(resnet.kernels, board ? Kernels::BOARD : Kernels::TORCH);
  for (const ModelKind other : {ModelKind::MLP, ModelKind::CONV, ModelKind::ATTENTION})
    for (const Kernels asked : {Kernels::AUTO, Kernels::BOARD}) {
      const Arithmetic net =
          resolve_arithmetic(Precision::AUTO, asked, model_spec(other).board_convolutions, torch::kCPU);
      EXPECT_EQ(net.precision, native);
      EXPECT_EQ(net.kernels, Kernels::TORCH);
    }
  const Arithmetic on_torch = resolve_arithmetic(Precision::AUTO, Kernels::TORCH,
                                                 model_spec(ModelKind::RESNET).board_convolutions, torch::kCPU);
  EXPECT_EQ(on_torch.precision, native);
  EXPECT_EQ(on_torch.kernels, Kernels::TORCH);
  const Arithmetic asked = resolve_arithmetic(Precision::FP32, Kernels::BOARD,
                                              model_spec(ModelKind::RESNET).board_convolutions, torch::kCPU);
  EXPECT_EQ(asked.precision, Precision::FP32);
  EXPECT_EQ(asked.kernels, Kernels::BOARD);
  const Arithmetic cuda = resolve_arithmetic(
      Precision::AUTO, Kernels::AUTO, model_spec(ModelKind::RESNET).board_convolutions, torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(cuda.precision, Precision::TF32);
  EXPECT_EQ(cuda.kernels, Kernels::TORCH);
}

}  // namespace
}  // namespace legalnet::nn
