// The paths (ModelConfig::paths, train --paths): each move's logit less the blocking values the
// net gives the squares strictly between its from- and to-square.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chess/bitboard.h"
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
  // A 1x1 convolution to one value a square, then the [64 x 1792] product.
  EXPECT_DOUBLE_EQ(p.forward_flops(), plain.forward_flops() + 2.0 * 64 * 8 + 2.0 * 64 * 1792);
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
  const auto costs = net->path_costs(tower_out);  // at the trained moves, in order
  ASSERT_EQ(costs.sizes(), (std::vector<int64_t>{3, 1792}));
  const auto moves = net->trained_moves(torch::kCPU);
  int lines = 0;
  for (int64_t j = 0; j < moves.size(0); ++j) {
    const int i = int(moves[j].item<int64_t>());
    ASSERT_TRUE(encode::index_is_geometric(i));
    const auto from = chess::Square(i / 64), to = chess::Square(i % 64);
    // between_bb holds its second square too (a check's block-or-capture mask).
    const chess::Bitboard way = chess::between_bb(from, to) & ~chess::square_bb(to);
    lines += way != 0;
    for (int b = 0; b < 3; ++b) {
      double want = 0;
      for (int s = 0; s < 64; ++s)
        if (way >> s & 1) want += blocking[b][s].item<double>();
      ASSERT_NEAR(costs[b][j].item<double>(), want, 1e-5) << "move index " << i;
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
  const auto costs = net->move_costs(net->tower_forward(planes));
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

}  // namespace
}  // namespace legalnet::nn
