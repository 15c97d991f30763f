// The board kernels' pairs-head scores (kernels/kernels.h) against torch's matmul and division,
// forward and the gradient, for random shapes and values, with every instruction set the CPU has.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "kernels/tile_gemm.h"
#include "relative_error.h"  // tests/nn/

namespace legalnet::nn {
namespace {

// The head's formula as ResNetImpl::pair_scores writes it in torch, in the type of `squares`.
torch::Tensor torch_pair_scores(const torch::Tensor& squares) {
  const int64_t batch = squares.size(0), d = squares.size(2) / 2;
  const auto query = squares.narrow(2, 0, d), key = squares.narrow(2, d, d);
  return (torch::matmul(query, key.transpose(1, 2)) / std::sqrt(double(d))).reshape({batch, 64 * 64});
}

// The largest relative error of the scores and of the gradient, against fp64.
double check(int64_t boards, int64_t d) {
  const auto exact = [](const torch::Tensor& t) { return t.to(torch::kFloat).to(torch::kDouble); };
  const auto s0 = exact(torch::randn({boards, 64, 2 * d}, torch::kDouble));
  const auto g0 = exact(torch::randn({boards, 64 * 64}, torch::kDouble));
  auto reference_in = s0.clone().requires_grad_(true);
  const auto reference = torch_pair_scores(reference_in);
  reference.backward(g0);
  auto squares = s0.to(torch::kFloat).requires_grad_(true);
  EXPECT_TRUE(board_pair_scores_applies(squares));
  const auto scores = board_pair_scores(squares);
  scores.backward(g0.to(torch::kFloat));
  const std::string what = fmt::format("{} boards, d {}", boards, d);
  EXPECT_EQ(scores.sizes(), reference.sizes()) << what;
  const double e_out = relative_error(scores, reference), e_grad = relative_error(squares.grad(), reference_in.grad());
  EXPECT_LT(e_out, 1e-5) << what << ": scores";
  EXPECT_LT(e_grad, 1e-5) << what << ": gradient";
  return std::max(e_out, e_grad);
}

TEST(BoardPairScores, MatchesTorchsMatmulAndItsGradient) {
  torch::manual_seed(5);
  const BoardIsa best = board_isa();
  for (const BoardIsa isa : {BoardIsa::AVX512, BoardIsa::AVX2, BoardIsa::BASELINE}) {
    if (isa > best) continue;
    board_isa_cap(isa);
    double worst = 0;
    for (const auto& [boards, d] : {std::pair{1, 16}, {3, 32}, {17, 32}, {5, 48}, {2, 64}})
      worst = std::max(worst, check(boards, d));
    fmt::print("pair scores, {}: largest relative error {:.2g} (fp64 reference)\n", board_isa_name(isa), worst);
  }
  board_isa_cap(BoardIsa::AVX512);
}

TEST(BoardPairScores, TheComparisonSeesAWrongKey) {
  // The check above fails when one key value is off: the comparison can fail.
  torch::manual_seed(6);
  const auto squares = torch::randn({2, 64, 64});
  auto wrong = squares.clone();
  wrong[1][37][40] += 0.5f;  // a key channel (d = 32)
  EXPECT_GT(relative_error(board_pair_scores(wrong), torch_pair_scores(squares).to(torch::kDouble)), 1e-3);
}

TEST(BoardPairScores, LeavesOtherShapesAndTypesToTorch) {
  EXPECT_FALSE(board_pair_scores_applies(torch::randn({2, 64, 48})));                       // d = 24
  EXPECT_FALSE(board_pair_scores_applies(torch::randn({2, 32, 64})));                       // not 64 squares
  EXPECT_FALSE(board_pair_scores_applies(torch::randn({2, 64, 64}, torch::kDouble)));       // fp64
  EXPECT_FALSE(board_pair_scores_applies(torch::randn({2, 64, 128}).narrow(2, 0, 64)));     // not contiguous
  EXPECT_FALSE(board_pair_scores_applies(torch::randn({2, 64, 64}).to(torch::kBFloat16)));  // bf16
  EXPECT_TRUE(board_pair_scores_applies(torch::randn({2, 64, 64})));
  EXPECT_THROW(board_pair_scores(torch::randn({2, 64, 48})), c10::Error);
}

}  // namespace
}  // namespace legalnet::nn
