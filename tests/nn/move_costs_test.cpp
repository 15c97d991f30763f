// What the resnet's head subtracts from each move's logit (ResNetImpl::move_costs): the paths
// (ModelConfig::paths, train --paths: the blocking values the net gives the squares strictly
// between its from- and to-square) and the vetoes (ModelConfig::vetoes, train --vetoes: for each
// veto of the move's line, a softplus of a value of its from-square plus one of its to-square);
// and the input skip that both read.
#include <gtest/gtest.h>

#include <cmath>
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

// The head subtracts move_costs from each move's logit, in forward() and in the logits training
// reads (forward_gathered), and leaves the indices that are never a move fixed off: the net
// against itself with `layer` (the paths' or the vetoes' convolution) giving no cost.
void expect_logits_less_move_costs(ResNetImpl& net, torch::nn::Conv2d& layer, int input_planes) {
  torch::NoGradGuard no_grad;
  net.eval();
  const auto planes = torch::randn({2, input_planes, 8, 8});
  const auto costs = net.move_costs(net.tower_forward(planes));
  const auto logits = net.forward(planes);
  const auto trained = net.forward_gathered(planes).trained();
  // softplus(-100) is 4e-44 (the paths), softplus(-200) 1e-87 (the vetoes: a from- and a to-value).
  const auto weight = layer->weight.clone(), bias = layer->bias.clone();
  layer->weight.zero_();
  layer->bias.fill_(-100.0);
  const auto free = net.forward(planes);
  layer->weight.copy_(weight);
  layer->bias.copy_(bias);
  const auto moves = net.trained_moves(torch::kCPU);
  EXPECT_TRUE(torch::allclose(logits.index_select(1, moves), (free - costs).index_select(1, moves), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(trained, logits.index_select(1, moves), 1e-5, 1e-5));
  EXPECT_GT(costs.index_select(1, moves).max().item<float>(), 0.1f);  // the check sees a cost
  EXPECT_FLOAT_EQ(logits[1][0].item<float>(), FIXED_OFF_LOGIT);       // a1a1
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

TEST(Paths, EveryLogitIsTheOtherHeadsLessItsCost) {
  torch::manual_seed(5);
  const ModelConfig c = with_paths(test::config("resnet", 0, 1, 8));
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(c));
  ASSERT_TRUE(net);
  expect_logits_less_move_costs(*net, net->paths, c.input_planes());
}

// The default's net (with_paths) with or without the vetoes.
ModelConfig with_vetoes(ModelConfig c, bool vetoes = true, bool paths = true) {
  c.vetoes = vetoes;
  return with_paths(c, paths);
}

// The line of a move from its squares alone (not from move_type_of): 0 file, 1 diagonal (both
// steps of one sign), 2 rank, 3 antidiagonal, 4 a knight's jump.
int line_of(int from, int to) {
  const int df = to % 8 - from % 8, dr = to / 8 - from / 8;
  if (df == 0) return 0;
  if (dr == 0) return 2;
  if (df == dr) return 1;
  if (df == -dr) return 3;
  return 4;
}

TEST(Vetoes, ConfigRoundTripsAndIsAResnetsOnly) {
  const ModelConfig v = with_vetoes(test::config("resnet", 0, 2, 8));
  EXPECT_EQ(ModelConfig::from_json(v.to_json()).to_json(), v.to_json());
  EXPECT_TRUE(ModelConfig::from_json(v.to_json()).vetoes);
  EXPECT_EQ(v.describe(), "resnet 2x8 rays pairs paths vetoes +state");
  const ModelConfig plain = with_vetoes(test::config("resnet", 0, 2, 8), false);
  // A net without them writes no key: its files are those written before the option existed.
  EXPECT_EQ(plain.to_json().find("vetoes"), std::string::npos);
  EXPECT_FALSE(ModelConfig::from_json(plain.to_json()).vetoes);
  // A 1x1 convolution to a from- and a to-value per veto: 5 lines x 2 vetoes x 2 squares.
  EXPECT_EQ(v.min_parameters(), plain.min_parameters() + 8 * 20);
  EXPECT_DOUBLE_EQ(v.forward_flops(), plain.forward_flops() + 2.0 * 64 * 8 * 20 + 3.0 * 2 * 1792);
  ModelConfig conv = test::config("conv", 16, 1, 8);
  conv.vetoes = true;
  EXPECT_EQ(test::error_of([&] { (void)conv.resolved(); }),
            "the vetoes (train --vetoes) are a resnet option, not conv's");
}

// Every geometric move's cost, for any values, is the sum over the two vetoes of its line of
// softplus(the veto's from-value at its from-square + its to-value at its to-square).
TEST(Vetoes, AMovesCostIsItsLinesVetoesOfItsTwoSquares) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(6);
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(with_vetoes(test::config("resnet", 0, 1, 8))));
  ASSERT_TRUE(net);
  const auto tower_out = torch::randn({2, 8, 8, 8});
  const auto values = net->vetoes(tower_out).to(torch::kDouble);  // [2, 20, 8, 8]: from-values, then to-values
  ASSERT_EQ(values.size(1), 20);
  const auto costs = net->veto_costs(tower_out).to(torch::kDouble);  // at the trained moves, in order
  ASSERT_EQ(costs.sizes(), (std::vector<int64_t>{2, 1792}));
  const auto v = values.accessor<double, 4>();
  const auto c = costs.accessor<double, 2>();
  const auto moves = net->trained_moves(torch::kCPU);
  std::vector<int> moves_by_line(5, 0);
  for (int64_t j = 0; j < moves.size(0); ++j) {
    const int i = int(moves[j].item<int64_t>());
    ASSERT_TRUE(encode::index_is_geometric(i));
    const int from = i / 64, to = i % 64, line = line_of(from, to);
    ++moves_by_line[size_t(line)];
    for (int b = 0; b < 2; ++b) {
      double want = 0;
      for (int k = 0; k < 2; ++k) {
        const double x = v[b][line * 2 + k][from / 8][from % 8] + v[b][10 + line * 2 + k][to / 8][to % 8];
        want += std::log1p(std::exp(x));
      }
      ASSERT_NEAR(c[b][j], want, 1e-5) << "move index " << i;
    }
  }
  // 8 x 56 moves along the files and ranks, 280 along each diagonal's direction, 336 jumps.
  EXPECT_EQ(moves_by_line, (std::vector<int>{448, 280, 448, 280, 336}));
}

TEST(Vetoes, EveryLogitIsTheOtherHeadsLessItsCost) {
  torch::manual_seed(7);
  // Without the paths, so that move_costs are the vetoes' alone.
  const ModelConfig c = with_vetoes(test::config("resnet", 0, 1, 8), true, false);
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(c));
  ASSERT_TRUE(net);
  expect_logits_less_move_costs(*net, net->vetoes, c.input_planes());
}

// The input skip (ModelConfig::input_skip, train --input-skip): a 1x1 convolution of the input
// planes added to the tower's output. It starts at zero, so the net starts as the one without
// it; once it has weights, what stands on a square reaches every head.
TEST(InputSkip, StartsAsTheNetWithoutItAndReadsTheInputs) {
  ModelConfig c = with_vetoes(test::config("resnet", 0, 2, 8));
  c.input_skip = true;
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_TRUE(ModelConfig::from_json(c.to_json()).input_skip);
  EXPECT_EQ(c.describe(), "resnet 2x8 rays pairs paths vetoes skip +state");
  const ModelConfig without = with_vetoes(test::config("resnet", 0, 2, 8));
  EXPECT_EQ(without.to_json().find("input_skip"), std::string::npos);  // older files read the same
  EXPECT_EQ(c.min_parameters(), without.min_parameters() + c.input_planes() * c.channels);
  ModelConfig conv = test::config("conv", 16, 1, 8);
  conv.input_skip = true;
  EXPECT_THROW(conv.resolved(), Error);
  torch::manual_seed(5);
  auto net = std::dynamic_pointer_cast<ResNetImpl>(make_model(c));
  torch::manual_seed(5);
  auto plain = make_model(without);
  ASSERT_TRUE(net && net->input_skip);
  net->eval();
  plain->eval();
  torch::NoGradGuard no_grad;
  const auto planes = torch::randn({3, c.input_planes(), 8, 8});
  EXPECT_TRUE(torch::equal(net->forward(planes), plain->forward(planes)));
  net->input_skip->weight.uniform_(-0.5, 0.5);
  const auto tower = net->tower_forward(planes);
  EXPECT_TRUE(
      torch::allclose(tower - net->input_skip(planes), net->tower->forward(net->stem_forward(planes)), 1e-5, 1e-5));
  EXPECT_FALSE(torch::allclose(net->forward(planes), plain->forward(planes), 1e-3, 1e-3));
}

}  // namespace
}  // namespace legalnet::nn
