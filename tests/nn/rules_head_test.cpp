// The rules head (ModelConfig::rules_head, train --rules-weight): a second loss on the tower's
// guess of the 3 attack planes, or of the rule lines (train --rule-lines); the net's inputs and its
// move logits are those of a net without it.
#include <gtest/gtest.h>

#include <string>

#include "chess/position.h"
#include "encode/attack_planes.h"
#include "encode/inputs.h"
#include "nn/forward.h"
#include "nn/loss.h"
#include "nn/model_file.h"
#include "nn/models.h"
#include "support/helpers.h"
#include "train/batches.h"
#include "train/fixtures.h"

namespace legalnet::nn {
namespace {

ModelConfig with_rules(ModelConfig c, bool lines = false) {
  c.policy_head = PolicyHead::PAIRS;
  c.inputs = encode::InputKind::STATE;
  c.rules_head = true;
  c.rule_lines = lines;
  return c.resolved();
}

TEST(RulesHead, ConfigRoundTripsAndIsAResnetsOnly) {
  const ModelConfig r = with_rules(test::config("resnet", 0, 2, 8));
  EXPECT_EQ(ModelConfig::from_json(r.to_json()).to_json(), r.to_json());
  EXPECT_TRUE(ModelConfig::from_json(r.to_json()).rules_head);
  EXPECT_EQ(r.describe(), "resnet 2x8 pairs rules +state");
  ModelConfig plain = r;
  plain.rules_head = false;
  // A net without the head writes no key: its files are those written before the head existed.
  EXPECT_EQ(plain.to_json().find("rules_head"), std::string::npos);
  EXPECT_FALSE(ModelConfig::from_json(plain.to_json()).rules_head);
  EXPECT_EQ(r.min_parameters(), plain.min_parameters() + 8 * encode::ATTACK_PLANES);
  EXPECT_DOUBLE_EQ(r.forward_flops(), plain.forward_flops());  // no prediction runs it
  ModelConfig conv = test::config("conv", 16, 1, 8);
  conv.rules_head = true;
  EXPECT_EQ(test::error_of([&] { conv.resolved(); }),
            "the rules head (train --rules-weight) is a resnet option, not conv's");
  // The rule lines: another head's width, written only when asked for, and only with the head.
  const ModelConfig lines = with_rules(test::config("resnet", 0, 2, 8), /*lines=*/true);
  EXPECT_EQ(ModelConfig::from_json(lines.to_json()).to_json(), lines.to_json());
  EXPECT_TRUE(ModelConfig::from_json(lines.to_json()).rule_lines);
  EXPECT_EQ(r.to_json().find("rule_lines"), std::string::npos);
  EXPECT_EQ(lines.describe(), "resnet 2x8 pairs rules-lines +state");
  EXPECT_EQ(lines.min_parameters(), plain.min_parameters() + 8 * encode::RULE_LINE_PLANES);
  ModelConfig headless = lines;
  headless.rules_head = false;
  EXPECT_NE(test::error_of([&] { headless.resolved(); }).find("give --rules-weight too"), std::string::npos);
}

// Rule planes in the inputs' frame: for black to move, square s of the board is s ^ 56.
TEST(RulesHead, TheBatchHoldsTheAttackPlanesInTheInputsFrame) {
  // Black to move: white's bishop on b5 pins the knight on c6, and the rook on e1 the pawn on e6,
  // to the king on e8.
  const chess::Position pos("4k3/8/2n1p3/1B6/8/8/8/4RK2 b - - 0 1");
  const encode::BoardState state = encode::BoardState::of(pos);
  train::Batch b = train::allocate_batch(1, encode::InputKind::STATE, false, encode::RuleTargets::ATTACK_PLANES);
  ASSERT_TRUE(b.rules.defined());
  ASSERT_EQ(b.rules.sizes(), (std::vector<int64_t>{1, encode::ATTACK_PLANES, 8, 8}));
  const uint16_t none = 0;
  train::fill_row(b, 0, encode::InputKind::STATE, encode::RuleTargets::ATTACK_PLANES, state, &none, &none);
  int8_t board[encode::ATTACK_PLANES * 64];
  encode::encode_attack_planes(state.squares, state.side, board);
  const auto rules = b.rules.accessor<float, 4>();
  int ones = 0;
  for (int plane = 0; plane < encode::ATTACK_PLANES; ++plane)
    for (int sq = 0; sq < 64; ++sq) {
      const int in_frame = sq ^ 56;  // black moves: ranks flipped
      EXPECT_EQ(rules[0][plane][in_frame / 8][in_frame % 8], float(board[plane * 64 + sq])) << plane << " " << sq;
      ones += board[plane * 64 + sq];
    }
  EXPECT_GT(ones, 10);  // attacked squares and two pinned pieces
  // With --rule-lines the batch holds those, in the same frame.
  train::Batch l = train::allocate_batch(1, encode::InputKind::STATE, false, encode::RuleTargets::LINES);
  ASSERT_EQ(l.rules.sizes(), (std::vector<int64_t>{1, encode::RULE_LINE_PLANES, 8, 8}));
  train::fill_row(l, 0, encode::InputKind::STATE, encode::RuleTargets::LINES, state, &none, &none);
  std::vector<float> lines(encode::RULE_LINE_PLANES * 64);
  encode::write_rule_targets(encode::RuleTargets::LINES, state, /*mover_frame=*/true, lines.data());
  EXPECT_TRUE(torch::equal(l.rules.flatten(), torch::from_blob(lines.data(), {int64_t(lines.size())})));
  // Without --rules-weight a batch holds no rule planes.
  EXPECT_FALSE(train::allocate_batch(1, encode::InputKind::STATE, false).rules.defined());
}

// The loss adds weight x the head's BCE summed over its values a row, over B x 4096; the
// move logits, and what prediction reads, do not depend on the head.
TEST(RulesHead, TheLossAddsTheWeightedRulesTermAndPredictionIgnoresTheHead) {
  for (const bool rule_lines : {false, true}) {
    SCOPED_TRACE(rule_lines ? "rule lines" : "attack planes");
    torch::manual_seed(4);
    const ModelConfig c = with_rules(test::config("resnet", 0, 2, 8), rule_lines);
    auto net = make_model(c);
    auto& resnet = dynamic_cast<ResNetImpl&>(*net);
    const auto rows = test::first_rows(16);
    std::vector<uint32_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
    const train::Batch b = train::make_batch(rows, order.data(), order.size(), false, c.inputs, c.rule_targets());
    ASSERT_TRUE(b.rules.defined());
    net->train();
    const double weight = 2.5;
    const auto with = training_loss(*net, b.planes, b.targets, Precision::FP32, {b.rules, weight});
    const auto without = training_loss(*net, b.planes, b.targets, Precision::FP32);
    const auto logits = resnet.rules(resnet.tower_forward(in_net_layout(*net, b.planes)));
    const double term =
        torch::binary_cross_entropy_with_logits(logits, b.rules, {}, {}, at::Reduction::Sum).item<double>() * weight /
        (double(order.size()) * 4096);
    EXPECT_GT(term, 0);
    EXPECT_NEAR(with.item<double>(), without.item<double>() + term, 1e-6 * with.item<double>());
    // Its gradient reaches the head (and through the tower the rest); without it the head gets none.
    net->zero_grad();
    with.backward();
    ASSERT_TRUE(resnet.rules->weight.grad().defined());
    EXPECT_GT(resnet.rules->weight.grad().abs().sum().item<double>(), 0);
    // A batch without rule planes is refused when a weight is asked for.
    EXPECT_NE(test::error_of([&] {
                training_loss(*net, b.planes, b.targets, Precision::FP32, {torch::Tensor(), 1.0});
              }).find("--rules-weight"),
              std::string::npos);
    // Prediction: in eval mode no rule logits, and the move logits do not move when the head does.
    net->eval();
    EXPECT_FALSE(net->forward_gathered(in_net_layout(*net, b.planes)).rules.defined());
    torch::NoGradGuard no_grad;
    const auto before = forward_logits(*net, b.planes, Precision::FP32);
    resnet.rules->weight.add_(1.0);
    EXPECT_TRUE(torch::equal(before, forward_logits(*net, b.planes, Precision::FP32)));
  }
}

// The head is part of the model file, so a checkpoint resumes it and a file loads into the same net.
TEST(RulesHead, TheModelFileHoldsTheHead) {
  torch::manual_seed(5);
  const ModelConfig c = with_rules(test::config("resnet", 0, 1, 8));
  auto net = make_model(c);
  const std::string path = test::temp_dir("rules_head") + "/model.safetensors";
  save_model(path, c, *net, "{}");
  const LoadedModel loaded = load_model(path, torch::kCPU);
  EXPECT_TRUE(loaded.config.rules_head);
  auto& saved = dynamic_cast<ResNetImpl&>(*net);
  auto& read = dynamic_cast<ResNetImpl&>(*loaded.net);
  EXPECT_TRUE(torch::equal(saved.rules->weight, read.rules->weight));
  EXPECT_TRUE(torch::equal(saved.rules->bias, read.rules->bias));
}

}  // namespace
}  // namespace legalnet::nn
