// The paths (ModelConfig::paths, train --paths): each move's logit less the blocking values the
// net gives the squares strictly between its from- and to-square; and lines of sight
// (ModelConfig::sight, train --sight): attention whose logits lose the same kind of values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "chess/bitboard.h"
#include "compute/device.h"
#include "encode/encode.h"
#include "nn/models.h"
#include "support/helpers.h"
#include "train/fixtures.h"

namespace legalnet::nn {
namespace {

ModelConfig with_paths(ModelConfig c, bool paths = true) {
  c.policy_head = PolicyHead::PAIRS;
  c.mixing = Mixing::RAYS;
  c.inputs = encode::InputKind::STATE;
  c.paths = paths;
  return c.resolved();
}

TEST(Paths, ConfigRoundTripsAndIsAResnetsOnly) {
  const ModelConfig p = with_paths(test::config("resnet", 0, 2, 8));
  EXPECT_EQ(ModelConfig::from_json(p.to_json()).to_json(), p.to_json());
  EXPECT_TRUE(ModelConfig::from_json(p.to_json()).paths);
  EXPECT_EQ(p.describe(), "resnet 2x8 rays pairs paths +state");
  const ModelConfig plain = with_paths(test::config("resnet", 0, 2, 8), false);
  // A net without them writes no key: its files are those written before the option existed.
  EXPECT_EQ(plain.to_json().find("paths"), std::string::npos);
  EXPECT_FALSE(ModelConfig::from_json(plain.to_json()).paths);
  EXPECT_EQ(p.min_parameters(), plain.min_parameters() + 8);
  // A 1x1 convolution to one value a square, then the [64 x 4096] product.
  EXPECT_DOUBLE_EQ(p.forward_flops(), plain.forward_flops() + 2.0 * 64 * 8 + 2.0 * 64 * 64 * 64);
  ModelConfig conv = test::config("conv", 16, 1, 8);
  conv.paths = true;
  EXPECT_EQ(test::error_of([&] { (void)conv.resolved(); }),
            "the paths (train --paths) are a resnet option, not conv's");
}

// Every geometric move's cost is the sum of the blocking values on the squares chess's own
// between table lists (a knight's jump and a step have none), for any values.
TEST(Paths, AMovesCostIsTheBlockingOfTheSquaresItPassesOver) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(4);
  chess::init_bitboards();
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(with_paths(test::config("resnet", 0, 1, 8))));
  ASSERT_TRUE(net);
  const auto tower_out = torch::randn({3, 8, 8, 8});
  const auto blocking = torch::softplus(net->paths(tower_out)).reshape({3, 64});
  const auto costs = net->path_costs(tower_out);
  ASSERT_EQ(costs.sizes(), (std::vector<int64_t>{3, 4096}));
  int lines = 0;
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    const auto from = chess::Square(i / 64), to = chess::Square(i % 64);
    // between_bb holds its second square too (a check's block-or-capture mask).
    const chess::Bitboard way = encode::index_is_geometric(i) ? chess::between_bb(from, to) & ~chess::square_bb(to) : 0;
    lines += way != 0;
    for (int b = 0; b < 3; ++b) {
      double want = 0;
      for (int s = 0; s < 64; ++s)
        if (way >> s & 1) want += blocking[b][s].item<double>();
      ASSERT_NEAR(costs[b][i].item<double>(), want, 1e-5) << "move index " << i;
    }
  }
  // The queen lines longer than a step: 1456 queen moves less the 420 steps.
  EXPECT_EQ(lines, 1456 - 420);
}

// The head subtracts the costs from each move's logit, in forward() and in the logits training
// reads (forward_gathered), and leaves the indices that are never a move fixed off.
TEST(Paths, EveryLogitIsTheOtherHeadsLessItsCost) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  const ModelConfig c = with_paths(test::config("resnet", 0, 1, 8));
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(c));
  ASSERT_TRUE(net);
  net->eval();
  const auto planes = torch::randn({2, c.input_planes(), 8, 8});
  const auto costs = net->path_costs(net->tower_forward(planes));
  const auto logits = net->forward(planes);
  const auto trained = net->forward_gathered(planes).trained();
  // The same net with every square free: softplus(-100) is 4e-44.
  const auto weight = net->paths->weight.clone(), bias = net->paths->bias.clone();
  net->paths->weight.zero_();
  net->paths->bias.fill_(-100.0);
  const auto free = net->forward(planes);
  net->paths->weight.copy_(weight);
  net->paths->bias.copy_(bias);
  const auto moves = net->trained_moves(torch::kCPU);
  EXPECT_TRUE(torch::allclose(logits.index_select(1, moves), (free - costs).index_select(1, moves), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(trained, logits.index_select(1, moves), 1e-5, 1e-5));
  EXPECT_GT(costs.index_select(1, moves).max().item<float>(), 0.1f);  // the check sees a cost
  EXPECT_FLOAT_EQ(logits[1][0].item<float>(), FIXED_OFF_LOGIT);       // a1a1
}

TEST(Sight, ConfigRoundTripsAndIsAResnetsOnly) {
  ModelConfig p = with_paths(test::config("resnet", 0, 2, 16));
  p.sight = true;
  p = p.resolved();
  EXPECT_EQ(ModelConfig::from_json(p.to_json()).to_json(), p.to_json());
  EXPECT_EQ(p.describe(), "resnet 2x16 rays pairs paths sight +state");
  const ModelConfig plain = with_paths(test::config("resnet", 0, 2, 16));
  EXPECT_EQ(plain.to_json().find("sight"), std::string::npos);
  EXPECT_EQ(p.min_parameters(), plain.min_parameters() + 4 * 16 * 16 + 16 * 2);  // 2 heads of 8
  EXPECT_GE(count_parameters(*make_model(p)), p.min_parameters());
  // Four linear maps and the blocking's, the [64 x 4096] product a head, two [64 x 64] products.
  EXPECT_DOUBLE_EQ(p.forward_flops(), plain.forward_flops() + 2.0 * 64 * (4 * 16 * 16 + 16 * 2) +
                                          2.0 * 2 * 64 * 64 * 64 + 2.0 * 2 * 64 * 64 * 16);
  ModelConfig conv = test::config("conv", 16, 1, 8);
  conv.sight = true;
  EXPECT_EQ(test::error_of([&] { (void)conv.resolved(); }), "sight (train --sight) is a resnet option, not conv's");
}

// The layer is its definition, summed square by square in fp64 with chess's own between table.
TEST(Sight, IsAttentionLessTheBlockingOfTheSquaresBetween) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(8);
  chess::init_bitboards();
  Sight layer(16);
  layer->to(torch::kDouble);
  for (auto& p : layer->parameters()) p.normal_(0, 0.5);
  const int64_t heads = layer->heads, width = 16 / heads;
  ASSERT_EQ(heads, 2);
  const auto x = torch::randn({2, 16, 8, 8}, torch::kDouble);
  const auto got = layer->forward(x);
  const auto squares = x.permute({0, 2, 3, 1}).reshape({2, 64, 16});
  const auto qkv = layer->qkv(squares), blocking = torch::softplus(layer->blocking(squares));
  auto want = torch::zeros({2, 64, 16}, torch::kDouble);
  for (int b = 0; b < 2; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int t = 0; t < 64; ++t) {
        std::vector<double> score(64);
        double top = -1e300, sum = 0;
        for (int s = 0; s < 64; ++s) {
          const auto q = qkv[b][t].narrow(0, h * width, width), k = qkv[b][s].narrow(0, 16 + h * width, width);
          double cost = 0;
          const chess::Bitboard way =
              chess::between_bb(chess::Square(t), chess::Square(s)) & ~chess::square_bb(chess::Square(s));
          for (int m = 0; m < 64; ++m)
            if (way >> m & 1) cost += blocking[b][m][h].item<double>();
          const int offset = (s / 8 - t / 8 + 7) * 15 + (s % 8 - t % 8 + 7);
          score[size_t(s)] = (q * k).sum().item<double>() / std::sqrt(double(width)) +
                             layer->offset_bias[h][offset].item<double>() - cost;
          top = std::max(top, score[size_t(s)]);
        }
        for (double& v : score) sum += v = std::exp(v - top);
        for (int s = 0; s < 64; ++s)
          want[b][t].narrow(0, h * width, width) += score[size_t(s)] / sum * qkv[b][s].narrow(0, 32 + h * width, width);
      }
  const auto expected = x + layer->out(want).view({2, 8, 8, 16}).permute({0, 3, 1, 2});
  EXPECT_TRUE(torch::allclose(got, expected, 1e-9, 1e-9)) << (got - expected).abs().max().item<double>();
}

// A square the layer calls blocked hides what lies behind it: a1 reads a8 along the a-file until
// a4 blocks.
TEST(Sight, ABlockedSquareHidesWhatLiesBehindIt) {
  torch::manual_seed(9);
  Sight layer(8);
  layer->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : layer->parameters()) p.normal_(0, 0.5);
    layer->blocking->weight.zero_();
    layer->blocking->weight[0][0] = 1000.0;  // channel 0 marks a blocker
    layer->blocking->bias.fill_(-4.0);
  }
  auto reads_a8 = [&](bool blocked) {
    auto x = torch::randn({1, 8, 8, 8}, torch::kDouble);
    x.select(1, 0).zero_();
    if (blocked) x[0][0][3][0] = 1.0;  // a4: rank 4, file a
    x.requires_grad_(true);
    layer->forward(x)[0].select(1, 0).select(1, 0).sum().backward();          // everything a1 holds
    return x.grad()[0].select(1, 7).select(1, 0).abs().sum().item<double>();  // from a8
  };
  EXPECT_GT(reads_a8(false), 1e-3);
  EXPECT_LT(reads_a8(true), 1e-12);
}

}  // namespace
}  // namespace legalnet::nn
