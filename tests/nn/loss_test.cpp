// The training loss's one-node CPU path (nn::training_loss, kernels/bce_rows.h) against the
// composition of torch's ops it replaces (policy_loss of forward_trained_logits): the row kernel
// on every instruction set against a double-precision reference, then whole nets' losses and
// every parameter's gradient, in fp32 and bf16, in both memory layouts.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "nn/forward.h"
#include "nn/loss.h"
#include "nn/models.h"
#include "relative_error.h"  // tests/nn/
#include "train/fixtures.h"
#include "util/error.h"

namespace legalnet::nn {
namespace {

struct IsaCap {  // runs the row kernel at a lower instruction set, restored afterwards
  explicit IsaCap(BoardIsa cap) { board_isa_cap(cap); }
  ~IsaCap() { board_isa_cap(BoardIsa::AVX512); }
};

// bf16 bits of a float, rounded to nearest even, and back.
uint16_t to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return uint16_t((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}
float from_bf16(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

TEST(BceRow, MatchesDoublePrecisionOnEveryInstructionSet) {
  std::mt19937 rng(7);
  std::normal_distribution<float> logit(0.0f, 6.0f);
  // Widths that leave a partial last vector for 16, 8 and 4 lanes; logits from -100 to 100,
  // exact zeros and tiny ones; a wider row read through columns, targets through theirs.
  for (const int64_t k : {1, 5, 17, 1792}) {
    const int64_t width = 2 * k + 3;
    std::vector<float> scores(size_t(width), 1e6f), targets(4096, 0.5f);
    std::vector<uint16_t> scores_bf16(static_cast<size_t>(width));
    std::vector<int64_t> columns, target_columns;
    for (int64_t i = 0; i < k; ++i) {
      columns.push_back(2 * i + 1);  // every other one: the rest (1e6) would dominate any sum
      target_columns.push_back((i * 37) % 4096);
    }
    for (int64_t i = 0; i < k; ++i) {
      float z = logit(rng);
      if (i % 97 == 1) z = 100.0f;
      if (i % 97 == 2) z = -100.0f;
      if (i % 97 == 3) z = 0.0f;
      if (i % 97 == 4) z = 1e-9f;
      scores[size_t(columns[size_t(i)])] = z;
      targets[size_t(target_columns[size_t(i)])] = float(rng() % 2);
    }
    for (int64_t i = 0; i < width; ++i) scores_bf16[size_t(i)] = to_bf16(scores[size_t(i)]);
    for (const bool bf16 : {false, true}) {
      double reference = 0;
      std::vector<double> reference_gradient;
      for (int64_t i = 0; i < k; ++i) {
        const size_t c = size_t(columns[size_t(i)]);
        const double z = bf16 ? double(from_bf16(scores_bf16[c])) : double(scores[c]);
        const double t = targets[size_t(target_columns[size_t(i)])];
        reference += std::max(z, 0.0) - t * z + std::log1p(std::exp(-std::fabs(z)));
        reference_gradient.push_back(1.0 / (1.0 + std::exp(-z)) - t);
      }
      for (const BoardIsa isa : {BoardIsa::BASELINE, BoardIsa::AVX2, BoardIsa::AVX512}) {
        if (isa > board_isa()) continue;
        SCOPED_TRACE(testing::Message() << "k " << k << (bf16 ? " bf16 " : " fp32 ") << board_isa_name(isa));
        std::vector<float> work(static_cast<size_t>(bce_row_work(k))), gradient(static_cast<size_t>(k));
        const BceRow row{.scores = bf16 ? static_cast<const void*>(scores_bf16.data()) : scores.data(),
                         .bf16 = bf16,
                         .columns = columns.data(),
                         .targets = targets.data(),
                         .target_columns = target_columns.data(),
                         .k = k};
        const double sum = bce_row(isa, row, work.data(), gradient.data());
        EXPECT_NEAR(sum, reference, 1e-6 * std::fabs(reference) + 1e-9);
        for (int64_t i = 0; i < k; ++i) EXPECT_NEAR(gradient[size_t(i)], reference_gradient[size_t(i)], 2e-7) << i;
        // Without a gradient asked for: the same sum.
        EXPECT_EQ(bce_row(isa, row, work.data(), nullptr), sum);
      }
    }
  }
}

TEST(BceRow, ALogitThatIsNotFiniteMakesTheLossNaN) {
  const float targets[3] = {0, 1, 0};
  const int64_t columns[3] = {0, 1, 2};
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    const float scores[3] = {0.5f, bad, -2.0f};
    std::vector<float> work(size_t(bce_row_work(3))), gradient(3);
    const BceRow row{.scores = scores, .columns = columns, .targets = targets, .target_columns = columns, .k = 3};
    EXPECT_TRUE(std::isnan(bce_row(board_isa(), row, work.data(), gradient.data()))) << bad;
  }
}

// A net's loss and parameter gradients by one path or the other.
struct LossAndGradients {
  double loss;
  std::vector<torch::Tensor> gradients;
};

LossAndGradients step(PolicyNet& net, const torch::Tensor& planes, const torch::Tensor& targets, Precision precision,
                      bool one_node) {
  net.zero_grad();
  const auto loss = one_node ? training_loss(net, planes, targets, precision)
                             : policy_loss(forward_trained_logits(net, planes, targets, precision));
  loss.backward();
  LossAndGradients out{loss.item<double>(), {}};
  for (const auto& p : net.parameters()) out.gradients.push_back(p.grad().clone());
  return out;
}

TEST(TrainingLoss, MatchesTorchsOpsForEveryNetPrecisionAndLayout) {
  torch::manual_seed(3);
  struct Case {
    const char* kind;
    int hidden, blocks, channels;
    PolicyHead policy_head = PolicyHead::TYPES;
    bool paths = false, vetoes = false;  // the second source: the pairs head less their costs, or these alone
  };
  for (const Case& k : {Case{"resnet", 0, 2, 16}, Case{"resnet", 0, 2, 16, PolicyHead::PAIRS},
                        Case{"resnet", 0, 2, 16, PolicyHead::PAIRS, true, true},
                        Case{"resnet", 0, 2, 16, PolicyHead::TYPES, false, true}, Case{"attention", 32, 1, 16},
                        Case{"mlp", 64, 0, 0}}) {
    ModelConfig c = test::config(k.kind, k.hidden, k.blocks, k.channels);
    c.policy_head = k.policy_head;
    c.paths = k.paths;
    c.vetoes = k.vetoes;
    c = c.resolved();
    auto net = make_model(c);
    net->train();
    const auto planes = torch::randn({37, c.input_planes(), 8, 8});
    const auto targets = (torch::rand({37, 4096}) < 0.02).to(torch::kFloat32);
    for (const bool channels_last : {false, true}) {
      if (channels_last) choose_memory_format(*net);
      for (const Precision precision : {Precision::FP32, Precision::BF16}) {
        SCOPED_TRACE(testing::Message() << c.describe() << (channels_last ? " channels-last " : " ")
                                        << precision_name(precision));
        const auto ops = step(*net, planes, targets, precision, false);
        const auto node = step(*net, planes, targets, precision, true);
        // bf16: torch's ops round the sum of the pairs' logits and the costs to bf16 before the
        // loss, the node adds them in fp32 (1.07e-5 apart on an AVX2-only Zen 3); a lost column or
        // source moves the loss by far more than 1e-4.
        EXPECT_NEAR(node.loss, ops.loss, (precision == Precision::FP32 ? 1e-5 : 1e-4) * ops.loss);
        ASSERT_EQ(node.gradients.size(), ops.gradients.size());
        // fp32: float rounding; bf16: both paths round the logits' gradient to bf16 once, and a
        // rounding of sigmoid(z) - t may fall the other way.
        const double tolerance = precision == Precision::FP32 ? 1e-4 : 2e-2;
        for (size_t i = 0; i < ops.gradients.size(); ++i)
          EXPECT_LT(relative_error(node.gradients[i], ops.gradients[i]), tolerance) << "parameter " << i;
      }
    }
  }
}

// The node's rows are summed in double and in order: the same loss and gradient for any number
// of threads (the net's own forward pass is torch's affair).
TEST(TrainingLoss, TheSameValueForAnyThreadCount) {
  torch::manual_seed(4);
  const auto moves = torch::randperm(4096, torch::kLong).slice(0, 0, 1792);
  const auto targets = (torch::rand({64, 4096}) < 0.02).to(torch::kFloat32);
  const int threads = at::get_num_threads();
  for (const bool two_sources : {false, true}) {
    std::vector<double> losses;
    std::vector<torch::Tensor> gradients, extra_gradients;
    for (const int n : {1, 2, 3}) {
      at::set_num_threads(n);
      torch::manual_seed(5);  // the same scores and columns each time
      const auto scores = (torch::randn({64, 4096}) * 8).to(torch::kBFloat16).requires_grad_(true);
      PolicyNet::Gathered g{scores, torch::randperm(4096, torch::kLong).slice(0, 0, 1792)};
      if (two_sources) {
        g.extra = (torch::randn({64, 4096}) * 4).requires_grad_(true);
        g.extra_columns = torch::randperm(4096, torch::kLong).slice(0, 0, 1792);
      }
      const auto loss = gathered_loss(g, targets, moves);
      loss.backward();
      losses.push_back(loss.item<double>());
      gradients.push_back(scores.grad());
      if (two_sources) extra_gradients.push_back(g.extra.grad());
    }
    at::set_num_threads(threads);
    for (size_t i = 1; i < losses.size(); ++i) {
      EXPECT_EQ(losses[i], losses[0]);
      EXPECT_TRUE(torch::equal(gradients[i], gradients[0]));
      if (two_sources) {
        EXPECT_TRUE(torch::equal(extra_gradients[i], extra_gradients[0]));
      }
    }
  }
}

// train --logit-margin m: each logit scored as z - m (2t - 1), by the node and by torch's path, is
// plain BCE of the shifted logits (a double-precision reference, its own arithmetic); legal moves
// of logit m sit where plain BCE has them at 0, and the margin makes the loss of every logit larger.
TEST(TrainingLoss, TheMarginScoresEachLogitAsIfLessSure) {
  torch::manual_seed(8);
  const double m = 3;
  const auto moves = torch::randperm(4096, torch::kLong).slice(0, 0, 1792);
  const auto targets = (torch::rand({16, 4096}) < 0.03).to(torch::kFloat32);
  const auto scores = (torch::randn({16, 4096}) * 8).requires_grad_(true);
  const auto columns = torch::randperm(4096, torch::kLong).slice(0, 0, 1792);
  const auto loss = gathered_loss({scores, columns}, targets, moves, m);
  loss.backward();
  const double fixed_off = std::log1p(std::exp(double(FIXED_OFF_LOGIT)));  // an index the model fixes off
  // The reference: softplus(z') - t z' over the trained logits, log(1 + e^-20) a fixed-off index.
  const auto t = targets.to(torch::kFloat64).index_select(1, moves);
  const auto z = scores.detach().to(torch::kFloat64).index_select(1, columns).requires_grad_(true);
  const auto shifted = z - m * (2 * t - 1);
  const auto sum = (torch::nn::functional::softplus(shifted) - t * shifted).sum() + 16.0 * (4096 - 1792) * fixed_off;
  const auto expected = sum / (16.0 * 4096);
  expected.backward();
  EXPECT_NEAR(loss.item<double>(), expected.item<double>(), 1e-5 * expected.item<double>());
  const auto gradient = scores.grad().to(torch::kFloat64).index_select(1, columns);
  EXPECT_LT(relative_error(gradient, z.grad()), 1e-5);
  // torch's path (CUDA's) agrees with the node.
  const auto torch_path = policy_loss({scores.detach().index_select(1, columns), t.to(torch::kFloat32), 4096 - 1792},
                                      at::Reduction::Mean, m);
  EXPECT_NEAR(torch_path.item<double>(), expected.item<double>(), 1e-5 * expected.item<double>());
  // Larger than plain BCE of the same logits: the margin asks more of every one of them.
  EXPECT_GT(loss.item<double>(), gathered_loss({scores.detach(), columns}, targets, moves).item<double>());
  // A legal move at logit m and an illegal one at -m cost what plain BCE charges at 0.
  const auto edge = torch::tensor({{float(m), float(-m)}});
  const auto two = torch::tensor({0L, 1L});
  auto edge_targets = torch::zeros({1, 4096});
  edge_targets[0][0] = 1;
  const auto at_edge = gathered_loss({edge, two}, edge_targets, two, m).item<double>() * 4096;
  EXPECT_NEAR(at_edge - 4094 * fixed_off, 2 * std::log(2.0), 1e-6);
}

// Two sources (the resnet's pairs head): the loss of their sum at the columns, and each source's
// gradient is the sum's, scattered to its own columns, whatever their dtypes.
TEST(TrainingLoss, TwoSourcesAreTheLossOfTheirSum) {
  torch::manual_seed(6);
  const auto moves = torch::randperm(4096, torch::kLong).slice(0, 0, 1792);
  const auto targets = (torch::rand({16, 4096}) < 0.03).to(torch::kFloat32);
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const auto a = (torch::randn({16, 4096}) * 6).to(dtype).requires_grad_(true);
    const auto b = (torch::randn({16, 4096}) * 3).requires_grad_(true);  // fp32 beside either
    const auto ca = torch::randperm(4096, torch::kLong).slice(0, 0, 1792),
               cb = torch::randperm(4096, torch::kLong).slice(0, 0, 1792);
    const auto loss = gathered_loss({a, ca, b, cb}, targets, moves);
    loss.backward();
    const auto a64 = a.detach().to(torch::kFloat64).requires_grad_(true),
               b64 = b.detach().to(torch::kFloat64).requires_grad_(true);
    const auto z = a64.index_select(1, ca) + b64.index_select(1, cb);
    const auto expected = policy_loss({z, targets.to(torch::kFloat64).index_select(1, moves), 4096 - 1792});
    expected.backward();
    EXPECT_NEAR(loss.item<double>(), expected.item<double>(), 1e-5 * expected.item<double>());
    EXPECT_LT(relative_error(a.grad().to(torch::kFloat64), a64.grad()), dtype == torch::kFloat32 ? 1e-5 : 1e-2);
    EXPECT_LT(relative_error(b.grad().to(torch::kFloat64), b64.grad()), 1e-5);
    EXPECT_EQ(a.grad().scalar_type(), dtype);
  }
}

TEST(TrainingLoss, RefusesLogitsItCannotRead) {
  const auto moves = torch::arange(4, torch::kLong);
  const auto targets = torch::zeros({2, 4096});
  // fp64 logits, and columns past the scores' width
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}, torch::kDouble), moves}, targets, moves), Error);
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}), moves + 1}, targets, moves), Error);
  // target columns past the 4096 move indices, targets of another width, 1-d logits
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}), moves}, targets, moves + 4093), Error);
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}), moves}, torch::zeros({2, 64}), moves), Error);
  EXPECT_THROW(gathered_loss({torch::zeros({8}), moves}, targets, moves), Error);
  EXPECT_NO_THROW(gathered_loss({torch::zeros({2, 4}), moves}, targets, moves));
  // a second source of other rows, columns past its width, or without columns
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}), moves, torch::zeros({3, 4}), moves}, targets, moves), Error);
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}), moves, torch::zeros({2, 4}), moves + 1}, targets, moves), Error);
  EXPECT_THROW(gathered_loss({torch::zeros({2, 4}), moves, torch::zeros({2, 4}), {}}, targets, moves), Error);
  EXPECT_NO_THROW(gathered_loss({torch::zeros({2, 4}), moves, torch::zeros({2, 8}), moves + 4}, targets, moves));
}

}  // namespace
}  // namespace legalnet::nn
