// The bf16 weight gradient of the board kernels (kernels/board_wgrad_bf16.h) against an fp64 sum of
// the same bf16 values, with vdpbf16ps where the CPU has it and the scalar loop everywhere; and
// board_conv3x3_bf16 (kernels/kernels.h) against torch's bf16 convolution and its gradients.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <cstdlib>
#include <string>

#include <fmt/core.h>

#include "compute/arithmetic.h"
#include "compute/choices.h"
#include "kernels/board_wgrad_bf16.h"
#include "kernels/kernels.h"
#include "kernels/tile_gemm.h"
#include "relative_error.h"  // tests/nn/

namespace legalnet::nn {
namespace {

struct Shape {
  int64_t boards, channels, outputs;
};

const std::vector<Shape> SHAPES = {{1, 16, 8}, {2, 32, 32}, {5, 48, 24}, {9, 16, 16}, {16, 32, 8}, {37, 32, 32}};

// The kernel's [K][3][3][C] sums, all segments added in order, for bf16 x [B,C,8,8] and gy
// [B,K,8,8] (any layout).
torch::Tensor kernel_weight_grad(const torch::Tensor& x, const torch::Tensor& gy, bool avx512) {
  const auto xc = x.permute({0, 2, 3, 1}).contiguous(), gc = gy.permute({0, 2, 3, 1}).contiguous();
  const Bf16WgradProblem p{reinterpret_cast<const uint16_t*>(xc.data_ptr<at::BFloat16>()),
                           reinterpret_cast<const uint16_t*>(gc.data_ptr<at::BFloat16>()), x.size(0), x.size(1),
                           gy.size(1)};
  std::vector<uint32_t> x_pairs(size_t(p.x_pairs_words())), g_pairs(size_t(p.g_pairs_words()));
  interleave_board_pairs(p, 0, p.pairs(), x_pairs.data(), g_pairs.data());
  auto sum = torch::zeros({p.outputs, 3, 3, p.channels});
  std::vector<float> part(size_t(p.weight_floats()));
  for (int64_t s = 0; s < p.segments(); ++s) {
    segment_weight_grad(p, s, x_pairs.data(), g_pairs.data(), part.data(), avx512);
    sum += torch::from_blob(part.data(), {p.outputs, 3, 3, p.channels});
  }
  return sum.permute({0, 3, 1, 2});
}

// The weight gradient in fp64 of the same bf16 values.
torch::Tensor reference_weight_grad(const torch::Tensor& x, const torch::Tensor& gy) {
  auto w = torch::zeros({gy.size(1), x.size(1), 3, 3}, torch::kDouble).requires_grad_(true);
  torch::conv2d(x.to(torch::kDouble), w, {}, 1, 1).backward(gy.to(torch::kDouble));
  return w.grad();
}

void check_kernel(bool avx512) {
  torch::manual_seed(16);
  double worst = 0;
  for (const Shape& s : SHAPES) {
    const auto x = torch::randn({s.boards, s.channels, 8, 8}).to(torch::kBFloat16);
    const auto gy = torch::randn({s.boards, s.outputs, 8, 8}).to(torch::kBFloat16);
    const double error = relative_error(kernel_weight_grad(x, gy, avx512), reference_weight_grad(x, gy));
    EXPECT_LT(error, 1e-5) << fmt::format("{} boards, {} -> {} channels", s.boards, s.channels, s.outputs);
    worst = std::max(worst, error);
  }
  fmt::print("bf16 weight gradient, {}: largest relative error {:.2g} (fp64 reference)\n",
             avx512 ? "vdpbf16ps" : "scalar", worst);
}

TEST(BoardWgradBf16, TheScalarLoopMatchesAnFp64Sum) { check_kernel(false); }

TEST(BoardWgradBf16, Vdpbf16psMatchesAnFp64Sum) {
  if (!cpu_has_avx512_bf16()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  check_kernel(true);
}

// A wrong answer that the comparison must catch: the second board of a pair left out.
TEST(BoardWgradBf16, TheComparisonSeesAMissingBoard) {
  torch::manual_seed(3);
  const auto x = torch::randn({2, 16, 8, 8}).to(torch::kBFloat16), gy = torch::randn({2, 8, 8, 8}).to(torch::kBFloat16);
  auto wrong_x = x.clone();
  wrong_x[1].zero_();
  EXPECT_GT(relative_error(kernel_weight_grad(wrong_x, gy, false), reference_weight_grad(x, gy)), 1e-2);
}

bool bf16_kernels_here() { return board_isa() == BoardIsa::AVX512 && cpu_has_avx512_bf16(); }

// The whole convolution: torch's forward and input gradient to the bit, the weight gradient
// within bf16's rounding of torch's (both round a float sum to bf16).
TEST(BoardConvBf16, MatchesTorchsBf16ConvolutionAndItsGradients) {
  if (!bf16_kernels_here()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  torch::manual_seed(8);
  for (const Shape& s : SHAPES) {
    const std::string what = fmt::format("{} boards, {} -> {} channels", s.boards, s.channels, s.outputs);
    const auto x0 =
        torch::randn({s.boards, s.channels, 8, 8}).to(torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
    const auto w0 = torch::randn({s.outputs, s.channels, 3, 3}) / std::sqrt(9.0 * double(s.channels));
    const auto gy = torch::randn({s.boards, s.outputs, 8, 8}).to(torch::kBFloat16);
    auto x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
    ASSERT_TRUE(board_conv_bf16_applies(x, w)) << what;
    const auto y = board_conv3x3_bf16(x, w);
    y.backward(gy);
    auto xt = x0.clone().requires_grad_(true), wt = w0.clone().requires_grad_(true);
    const auto yt = torch::conv2d(xt, wt.to(torch::kBFloat16), {}, 1, 1);
    yt.backward(gy);
    EXPECT_TRUE(torch::equal(y, yt)) << what << ": output";
    EXPECT_TRUE(torch::equal(x.grad(), xt.grad())) << what << ": input gradient";
    EXPECT_EQ(w.grad().scalar_type(), torch::kFloat) << what;
    EXPECT_LT(relative_error(w.grad(), reference_weight_grad(x0, gy)), 8e-3) << what << ": weight gradient";
    EXPECT_LT(relative_error(w.grad(), wt.grad()), 1.6e-2) << what << ": against torch's";
  }
}

TEST(BoardConvBf16, TheSameBytesForAnyThreadCount) {
  if (!bf16_kernels_here()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  torch::manual_seed(5);
  const auto x0 = torch::randn({37, 32, 8, 8}).to(torch::kBFloat16), w0 = torch::randn({32, 32, 3, 3}) / 17.0;
  const auto gy = torch::randn({37, 32, 8, 8}).to(torch::kBFloat16);
  auto run = [&](int threads) {
    const int before = at::get_num_threads();
    at::set_num_threads(threads);
    auto w = w0.clone().requires_grad_(true);
    board_conv3x3_bf16(x0, w).backward(gy);
    at::set_num_threads(before);
    return w.grad();
  };
  const auto two = run(2);
  EXPECT_TRUE(torch::equal(two, run(2)));
  EXPECT_TRUE(torch::equal(two, run(1)));
}

TEST(BoardConvBf16, TakesOnlyItsShapes) {
  if (!bf16_kernels_here()) GTEST_SKIP() << "this CPU has no AVX512-BF16";
  const auto x = torch::randn({2, 32, 8, 8}).to(torch::kBFloat16),
             w = torch::randn({32, 32, 3, 3}).requires_grad_(true);
  EXPECT_TRUE(board_conv_bf16_applies(x, w));
  {
    torch::NoGradGuard inference;  // nothing to take: the forward pass is torch's
    EXPECT_FALSE(board_conv_bf16_applies(x, w));
  }
  EXPECT_FALSE(board_conv_bf16_applies(x, w.detach()));
  EXPECT_FALSE(board_conv_bf16_applies(x.to(torch::kFloat), w));  // fp32: the F(4x4) kernels
  EXPECT_FALSE(board_conv_bf16_applies(torch::randn({2, 7, 8, 8}).to(torch::kBFloat16), w));    // the stem's 7 planes
  EXPECT_FALSE(board_conv_bf16_applies(x, torch::randn({12, 32, 3, 3}).requires_grad_(true)));  // 12 outputs
  EXPECT_FALSE(board_conv_bf16_applies(torch::randn({2, 32, 9, 9}).to(torch::kBFloat16), w));
  board_isa_cap(BoardIsa::AVX2);  // an imitated AVX2-only CPU has no vdpbf16ps
  EXPECT_FALSE(board_conv_bf16_applies(x, w));
  board_isa_cap(BoardIsa::AVX512);
}

// --kernels auto in bf16: ours on AVX512-BF16 without AMX, torch's elsewhere and on CUDA.
TEST(BoardConvBf16, AutoTakesItWhereItIsMeasuredFaster) {
  const bool ours = bf16_kernels_here() && !cpu_has_amx_bf16();
  EXPECT_EQ(resolve_kernels(Kernels::AUTO, torch::kCPU, Precision::BF16), ours ? Kernels::BOARD : Kernels::TORCH);
  EXPECT_EQ(resolve_kernels(Kernels::AUTO, torch::Device(torch::kCUDA, 0), Precision::BF16), Kernels::TORCH);
  EXPECT_EQ(resolve_kernels(Kernels::TORCH, torch::kCPU, Precision::BF16), Kernels::TORCH);
  EXPECT_EQ(resolve_kernels(Kernels::BOARD, torch::kCPU, Precision::BF16), Kernels::BOARD);
}

}  // namespace
}  // namespace legalnet::nn

namespace legalnet::nn {
namespace {

// ONEDNN_MAX_CPU_ISA, the way this project imitates an older CPU, takes the bf16 units away from
// --precision auto as it takes them from oneDNN: an imitated AVX2-only CPU with AMX trained in
// emulated bf16 at a thirtieth of its fp32 rate before.
TEST(CpuIsa, OnednnMaxCpuIsaTakesTheBf16UnitsAway) {
  const char* before = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string saved = before ? before : "";
  const auto allows = [](const char* isa, CpuFeature f) {
    if (isa)
      setenv("ONEDNN_MAX_CPU_ISA", isa, 1);
    else
      unsetenv("ONEDNN_MAX_CPU_ISA");
    return onednn_allows(f);
  };
  for (const CpuFeature f : {CpuFeature::AVX512_BF16, CpuFeature::AMX_BF16}) {
    EXPECT_TRUE(allows(nullptr, f));
    EXPECT_TRUE(allows("ALL", f));
    EXPECT_TRUE(allows("default", f));
    EXPECT_TRUE(allows("AVX512_CORE_AMX", f));
    EXPECT_FALSE(allows("AVX2", f));
    EXPECT_FALSE(allows("avx2_vnni", f));
    EXPECT_FALSE(allows("AVX512_CORE", f));
  }
  EXPECT_TRUE(allows("AVX512_CORE_BF16", CpuFeature::AVX512_BF16));
  EXPECT_FALSE(allows("AVX512_CORE_BF16", CpuFeature::AMX_BF16));
  if (before)
    setenv("ONEDNN_MAX_CPU_ISA", saved.c_str(), 1);
  else
    unsetenv("ONEDNN_MAX_CPU_ISA");
}

}  // namespace
}  // namespace legalnet::nn
