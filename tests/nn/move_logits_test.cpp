// The board kernels' move logits at inference (kernels::board_move_logits, ResNetImpl::
// board_logits) against the head torch's ops compose, for the resnet's heads with and without
// each part, with every instruction set the CPU has; and its softplus against fp64's.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cmath>
#include <string>
#include <vector>

#include "encode/encode.h"
#include "kernels/kernels.h"
#include "nn/models.h"
#include "relative_error.h"  // tests/nn/
#include "train/fixtures.h"

namespace legalnet::nn {
namespace {

ModelConfig head_config(PolicyHead head, bool paths, bool vetoes) {
  ModelConfig c = test::config("resnet", 0, 1, 16);
  c.policy_head = head;
  c.mixing = Mixing::RAYS;
  c.inputs = encode::InputKind::STATE;
  c.paths = paths;
  c.vetoes = vetoes;
  return c.resolved();
}

// What forward() returns by torch's ops: the trained logits, off at the other indices.
torch::Tensor torch_logits(ResNetImpl& net, const torch::Tensor& tower_out) {
  const auto trained = net.head_forward(tower_out).trained();
  return torch::full({trained.size(0), encode::MOVE_INDICES}, FIXED_OFF_LOGIT)
      .index_copy(1, net.trained_moves(torch::kCPU), trained);
}

TEST(BoardMoveLogits, MatchTorchsHeadForEveryPart) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(11);
  const BoardIsa best = board_isa();
  struct Case {
    PolicyHead head;
    bool paths, vetoes;
  };
  for (const Case& k :
       {Case{PolicyHead::PAIRS, true, true}, Case{PolicyHead::PAIRS, true, false}, Case{PolicyHead::PAIRS, false, true},
        Case{PolicyHead::TYPES, true, true}, Case{PolicyHead::TYPES, false, true}}) {
    const ModelConfig c = head_config(k.head, k.paths, k.vetoes);
    auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(c));
    ASSERT_TRUE(net);
    net->eval();
    // Weights 8x their start: the softplus sees values far on both sides of 0.
    for (auto& p : net->parameters()) p.mul_(8.0);
    net->use_kernels(Kernels::BOARD);
    for (const BoardIsa isa : {BoardIsa::AVX512, BoardIsa::AVX2, BoardIsa::BASELINE}) {
      if (isa > best) continue;
      board_isa_cap(isa);
      for (const int64_t boards : {1, 9, 70}) {
        const auto tower_out = torch::randn({boards, 16, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast);
        const auto reference = torch_logits(*net, tower_out);
        const auto logits = net->board_logits(tower_out);
        const std::string what = fmt::format("{}, {} boards, {}", c.describe(), boards, board_isa_name(isa));
        ASSERT_EQ(logits.sizes(), reference.sizes()) << what;
        EXPECT_LT(relative_error(logits, reference), 2e-6) << what;
        // The indices that are never a move keep their logit exactly.
        const auto off = reference.eq(FIXED_OFF_LOGIT);
        EXPECT_EQ(off.sum().item<int64_t>(), boards * (4096 - 1792)) << what;
        EXPECT_TRUE(logits.masked_select(off).eq(FIXED_OFF_LOGIT).all().item<bool>()) << what;
      }
    }
    board_isa_cap(BoardIsa::AVX512);
  }
}

TEST(BoardMoveLogits, ForwardTakesThemOnlyForInferenceOnTheBoardKernels) {
  torch::manual_seed(12);
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(head_config(PolicyHead::PAIRS, true, true)));
  ASSERT_TRUE(net);
  net->eval();
  net->use_kernels(Kernels::BOARD);
  const auto planes = torch::randn({3, net->stem->weight.size(1), 8, 8});
  {
    torch::NoGradGuard no_grad;
    const auto tower_out = net->tower_forward(planes);
    EXPECT_TRUE(torch::equal(net->forward(planes), net->board_logits(tower_out)));
    // The comparison can fail: a head without the costs is far off.
    EXPECT_GT(relative_error(net->board_logits(tower_out), net->head_forward(tower_out).scores), 1e-2);
  }
  // With gradients, torch's ops (differentiable): the same numbers up to rounding.
  const auto trained = net->forward(planes);
  EXPECT_TRUE(trained.requires_grad());
  torch::NoGradGuard no_grad;
  EXPECT_LT(relative_error(trained.detach(), net->forward(planes)), 2e-6);
}

// One move (a1c1, over b1) whose cost is softplus of the path value at b1: board b holds
// x = -120 + 0.12 b, across both tails and the threshold of torch's softplus, on every set.
TEST(BoardMoveLogits, SoftplusMatchesFp64AcrossItsRange) {
  const int64_t boards = 2001;
  MoveLogitTables tables;
  tables.moves = {2};
  tables.between_offsets = {0, 1};
  tables.between_squares = {1};
  tables.off_logit = -20.0f;
  MoveLogitParts parts;
  parts.scores = torch::zeros({boards, 1});
  parts.columns = torch::zeros({1}, torch::kLong);
  parts.path_values = torch::zeros({boards, 64});
  for (int64_t b = 0; b < boards; ++b) parts.path_values[b][1] = float(-120.0 + 0.12 * double(b));
  const BoardIsa best = board_isa();
  for (const BoardIsa isa : {BoardIsa::AVX512, BoardIsa::AVX2, BoardIsa::BASELINE}) {
    if (isa > best) continue;
    board_isa_cap(isa);
    const auto logits = board_move_logits(parts, tables);
    double worst = 0;
    for (int64_t b = 0; b < boards; ++b) {
      const double x = parts.path_values[b][1].item<float>();
      const double want = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      const double got = -double(logits[b][2].item<float>());
      // Within a few units of float's rounding of the value, or 1e-7 near 0.
      const double error = std::abs(got - want) / std::max(want, 1.0);
      worst = std::max(worst, error);
      ASSERT_LT(std::abs(got - want), 1e-7 + 3e-7 * want) << "x " << x << ", " << board_isa_name(isa);
    }
    EXPECT_FLOAT_EQ(logits[0][3].item<float>(), -20.0f);
    fmt::print("move logits' softplus, {}: largest error {:.2g} (relative above 1)\n", board_isa_name(isa), worst);
  }
  board_isa_cap(BoardIsa::AVX512);
}

TEST(BoardMoveLogits, RefusesWhatItCannotTake) {
  MoveLogitTables tables;
  tables.moves = {2};
  tables.between_offsets = {0, 1};
  tables.between_squares = {1};
  MoveLogitParts parts{.scores = torch::zeros({2, 1}), .columns = torch::zeros({1}, torch::kLong)};
  parts.path_values = torch::zeros({2, 64});
  EXPECT_TRUE(board_move_logits_applies(parts));
  EXPECT_NO_THROW(board_move_logits(parts, tables));
  auto wrong = parts;
  wrong.path_values = torch::zeros({2, 64}).requires_grad_(true);  // training's: torch's ops
  EXPECT_FALSE(board_move_logits_applies(wrong));
  wrong = parts;
  wrong.pairs = torch::zeros({2, 4096}, torch::kBFloat16);
  EXPECT_FALSE(board_move_logits_applies(wrong));
  wrong = parts;
  wrong.pairs = torch::zeros({3, 4096});  // another batch
  EXPECT_FALSE(board_move_logits_applies(wrong));
  auto outside = tables;
  outside.between_squares = {64};
  EXPECT_THROW(board_move_logits(parts, outside), c10::Error);
  outside = tables;
  outside.moves = {4096};
  EXPECT_THROW(board_move_logits(parts, outside), c10::Error);
  wrong = parts;
  wrong.columns = torch::ones({1}, torch::kLong);  // scores has one column
  EXPECT_THROW(board_move_logits(wrong, tables), c10::Error);
  wrong = parts;
  wrong.veto_values = torch::zeros({2, 4});  // veto values without veto tables
  EXPECT_THROW(board_move_logits(wrong, tables), c10::Error);
}

}  // namespace
}  // namespace legalnet::nn
