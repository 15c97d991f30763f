#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chess/movegen.h"
#include "compute/cuda_module.h"
#include "compute/device.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "encode/inputs.h"
#include "kernels/board_wgrad_bf16.h"
#include "kernels/tile_gemm.h"
#include "nn/forward.h"
#include "nn/loss.h"
#include "nn/model_file.h"
#include "nn/models.h"
#include "run/gen_moves/gen_moves.h"
#include "run/tensorize/tensorize.h"
#include "support/helpers.h"
#include "train/batches.h"
#include "train/distributed.h"
#include "train/fixtures.h"
#include "train/metrics.h"
#include "train/run_folder.h"
#include "train/stream.h"
#include "train/tensorboard.h"
#include "util/choices.h"
#include "util/error.h"

namespace legalnet::nn {
using namespace train;
using namespace run;

// What the tools do first (nn::pick_device), before any test asks torch about CUDA: CUDA's part
// of legalnet is loaded where the NVIDIA driver is, so the CUDA tests run where a GPU is, in a
// run of the whole binary as well as one test a process.
[[maybe_unused]] const bool cuda_module_loaded = cuda_module() != nullptr;
using test::config;
using test::first_rows;
using test::tiny_dataset;
namespace {

// A resnet whose blocks mix along lines (ModelConfig::mixing).
ModelConfig lines(ModelConfig c) {
  c.mixing = Mixing::LINES;
  return c.resolved();
}

// A resnet whose blocks scan along rays (ModelConfig::mixing).
ModelConfig rays(ModelConfig c) {
  c.mixing = Mixing::RAYS;
  return c.resolved();
}

// A resnet with the pairs head (ModelConfig::policy_head).
ModelConfig pairs(ModelConfig c) {
  c.policy_head = PolicyHead::PAIRS;
  return c.resolved();
}

Batch batch_of_all(const CompactPositions& rows, encode::InputKind inputs = encode::InputKind::PLANES) {
  std::vector<uint32_t> all(rows.size());
  std::iota(all.begin(), all.end(), 0u);
  return make_batch(rows, all.data(), all.size(), false, inputs);
}

TEST(Models, ShapesAndFixedOffIndices) {
  torch::manual_seed(0);
  ModelConfig attacks = config("conv", 16, 1, 8);
  attacks.inputs = encode::InputKind::ATTACKS;
  ModelConfig attention = config("attention", 0, 2, 16);
  attention.inputs = encode::InputKind::STATE;
  ModelConfig resnet_state = config("resnet", 0, 2, 8);
  resnet_state.inputs = encode::InputKind::STATE_ATTACKS;
  for (const auto& c :
       {config("mlp", 32, 0, 0), config("conv", 16, 2, 8), config("resnet", 0, 2, 8), attacks, attention, resnet_state,
        lines(config("resnet", 0, 2, 8)), rays(config("resnet", 0, 2, 8)), pairs(config("resnet", 0, 2, 8))}) {
    const auto planes = torch::randn({3, c.input_planes(), 8, 8});
    auto net = make_model(c);
    const auto logits = net->forward(planes);
    ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{3, 4096})) << c.describe();
    // a1a1 can never be legal: fixed far below zero.
    EXPECT_FLOAT_EQ(logits[0][0].item<float>(), -20.0f) << c.describe();
    EXPECT_NE(logits[0][encode::move_index(chess::Move(chess::SQ_E2, chess::SQ_E4))].item<float>(), -20.0f);
  }
  ModelConfig full = config("mlp", 32, 0, 0);
  full.geometric_head = false;
  EXPECT_EQ(make_model(full)->forward(torch::randn({3, 7, 8, 8})).size(1), 4096);
  int types = 0;
  for (int i = 0; i < 4096; ++i) types += encode::move_type_of(i) >= 0;
  EXPECT_EQ(types, encode::GEOMETRIC_INDICES);
  // The FLOP count of a resnet 6x32 on the 18 state planes, by hand: stem, 12 convolutions, 1x1 policy.
  ModelConfig r6 = config("resnet", 0, 6, 32);
  r6.inputs = encode::InputKind::STATE;
  EXPECT_DOUBLE_EQ(r6.forward_flops(), 2.0 * 64 * 18 * 32 * 9 + 12 * 2.0 * 64 * 32 * 32 * 9 + 2.0 * 64 * 32 * 64);
  // Line mixing adds one [64,64] matrix per channel and block, applied densely.
  EXPECT_DOUBLE_EQ(lines(r6).forward_flops(), r6.forward_flops() + 6 * 2.0 * 64 * 64 * 32);
  // A ray scan: per block and square 32 -> 2 x 8 values and gates, 8 x 8 -> 32, and the walks.
  EXPECT_DOUBLE_EQ(rays(r6).forward_flops(),
                   r6.forward_flops() + 6 * (2.0 * 64 * (32 * 16 + 64 * 32) + 2.0 * 64 * 8 * 8));
  EXPECT_EQ(rays(r6).min_parameters(), r6.min_parameters() + 6 * (32 * 16 + 64 * 32));
  // The pairs head: a 1x1 convolution to query and key, then 64 x 64 dot products.
  EXPECT_DOUBLE_EQ(pairs(r6).forward_flops(), r6.forward_flops() + 2.0 * 64 * 32 * 64 + 2.0 * 64 * 64 * 32);
  EXPECT_EQ(pairs(r6).min_parameters(), r6.min_parameters() + 2 * 32 * 32);
}

// The pairs head scores a move from its two squares: a change of the tower's output on one
// square reaches the logit of a move to it from across the board, which the move-type head
// (a 1x1 convolution read at the from-square) cannot; and it adds exactly the scaled dot product.
TEST(Models, ThePairsHeadSeesTheToSquare) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(6);
  ResNet net(pairs(config("resnet", 0, 1, 8)));
  const auto t = torch::randn({2, 8, 8, 8});
  auto moved = t.clone();
  moved.index_put_({torch::indexing::Slice(), torch::indexing::Slice(), 7, 7}, 5.0);  // square h8
  const int a1h8 = encode::move_index(chess::Move(chess::SQ_A1, chess::SQ_H8));
  const auto types_before = net->policy(t).flatten(2), types_after = net->policy(moved).flatten(2);
  EXPECT_TRUE(torch::equal(types_before.select(2, 0), types_after.select(2, 0)));  // from a1: unchanged
  EXPECT_GT((net->pair_scores(moved) - net->pair_scores(t)).select(1, a1h8).abs().min().item<float>(), 0);
  // By hand: query of a1 (the first 8 channels of the 1x1 convolution) times key of h8, over sqrt(8).
  const auto qk = net->pairs(t).flatten(2);  // [2,16,64]
  const auto expected = (qk.select(2, 0).narrow(1, 0, 8) * qk.select(2, 63).narrow(1, 8, 8)).sum(1) / std::sqrt(8.0);
  EXPECT_TRUE(torch::allclose(net->pair_scores(t).select(1, a1h8), expected, 1e-5, 1e-6));
  // In channels-last (as training runs it) the same scores.
  EXPECT_TRUE(torch::allclose(net->pair_scores(t.contiguous(torch::MemoryFormat::ChannelsLast)), net->pair_scores(t),
                              1e-5, 1e-6));
}

// Line mixing: a change on one square reaches exactly the squares of its rank, file and
// diagonals in the mixing layer, and every end of those lines through ONE residual block,
// which a plain block (two 3x3 convolutions: two squares) cannot.
TEST(Models, LineMixingSeesAWholeLineInOneBlock) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  LineMixing mixing(4);
  const auto x = torch::randn({2, 4, 8, 8});
  auto moved = x.clone();
  moved.index_put_({torch::indexing::Slice(), torch::indexing::Slice(), 2, 5}, 7.0);  // row 2, column 5
  const auto y = mixing(x);
  ASSERT_EQ(y.sizes(), x.sizes());
  const auto changed = (mixing(moved) - y).abs().amax({0, 1});  // [8,8]
  for (int row = 0; row < 8; ++row)
    for (int column = 0; column < 8; ++column) {
      const bool on_a_line = row == 2 || column == 5 || row - column == 2 - 5 || row + column == 2 + 5;
      EXPECT_EQ(changed[row][column].item<float>() > 0, on_a_line) << row << "," << column;
    }
  // The same in channels-last, as training runs it.
  const auto x_last = x.contiguous(torch::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(torch::allclose(mixing(x_last), y, 1e-5, 1e-6));
  // The matrices hold each channel's 56 weights, each once per pair of squares a line joins.
  EXPECT_EQ(mixing->matrices().ne(0).sum().item<int64_t>(), 4 * 1456);  // 1456 = queen moves on an empty board

  // Lines and rays alike reach the far ends of a1's lines in one block.
  for (const Mixing mixing : {Mixing::NONE, Mixing::LINES, Mixing::RAYS}) {
    ResidualBlock block(8, /*squeeze_excitation=*/false, mixing);
    block->eval();
    const auto a = torch::randn({1, 8, 8, 8});
    auto b = a.clone();
    b.index_put_({0, torch::indexing::Slice(), 0, 0}, 5.0);  // square a1's features
    const auto delta = (block(b) - block(a)).abs().amax(1)[0];
    const bool far = mixing != Mixing::NONE;
    for (const auto& [row, column] : {std::pair{7, 7}, std::pair{0, 7}, std::pair{7, 0}})
      EXPECT_EQ(delta[row][column].item<float>() > 0, far)
          << row << "," << column << " " << choice_of(MIXINGS, mixing).name;
    EXPECT_GT(delta[1][1].item<float>(), 0);  // a neighbour is reached either way
  }
}

// Training scores the trained logits only (nn/loss.h): they are forward()'s at trained_moves()
// in either layout, and the loss and its gradients are those of BCE on all 4096 logits.
TEST(Models, TheLossOnTrainedLogitsIsTheLossOnAll4096) {
  ModelConfig full = config("mlp", 32, 0, 0);
  full.geometric_head = false;
  ModelConfig attention = config("attention", 0, 2, 16);
  const Batch b = batch_of_all(first_rows(24));
  for (const auto& c :
       {config("mlp", 32, 0, 0), full, config("conv", 16, 2, 8), config("resnet", 0, 2, 8), attention,
        lines(config("resnet", 0, 2, 8)), rays(config("resnet", 0, 2, 8)), pairs(config("resnet", 0, 2, 8))})
    for (const bool channels_last : {false, true}) {
      const std::string what = c.describe() + (channels_last ? " channels-last" : "");
      torch::manual_seed(3);
      auto net = make_model(c);
      if (channels_last) net->use_channels_last();
      const auto& moves = net->trained_moves(torch::kCPU);
      EXPECT_EQ(moves.numel(), c.geometric_head ? encode::GEOMETRIC_INDICES : 4096) << what;
      EXPECT_TRUE(torch::equal(forward_logits(*net, b.planes, Precision::FP32).index_select(1, moves),
                               forward_logits_of(*net, b.planes, Precision::FP32, &PolicyNet::forward_trained)))
          << what;

      auto gradients = [&](const torch::Tensor& loss) {
        net->zero_grad();
        loss.backward();
        std::vector<torch::Tensor> g;
        for (const auto& p : net->parameters()) g.push_back(p.grad().clone());
        return g;
      };
      const auto all =
          torch::binary_cross_entropy_with_logits(forward_logits(*net, b.planes, Precision::FP32), b.targets);
      const auto trained = forward_trained_logits(*net, b.planes, b.targets, Precision::FP32);
      const auto loss = policy_loss(trained);
      EXPECT_NEAR(loss.item<double>(), all.item<double>(), 1e-6 * all.item<double>()) << what;
      EXPECT_NEAR(policy_loss(trained, at::Reduction::Sum).item<double>(), all.item<double>() * 24 * 4096,
                  1e-5 * all.item<double>() * 24 * 4096)
          << what;
      const auto expected = gradients(all), got = gradients(loss);
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(torch::allclose(got[i], expected[i], 1e-4, 1e-7)) << what << " parameter " << i;
    }
}

TEST(Models, TheConfigRoundTripsAndOldFilesMeanThePredecessorsPlanes) {
  ModelConfig c = config("conv", 64, 2, 8);
  c.inputs = encode::InputKind::ATTACKS;
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_EQ(c.input_planes(), 10);
  EXPECT_EQ(c.describe(), "conv 2x8 fc 64 +attacks");
  ModelConfig a = config("attention", 0, 3, 32);
  a.inputs = encode::InputKind::STATE;
  EXPECT_EQ(ModelConfig::from_json(a.to_json()).to_json(), a.resolved().to_json());
  EXPECT_EQ(a.resolved().describe(), "attention 3x32 h4 ff64 +state");
  EXPECT_EQ(a.input_planes(), 18);
  a.heads = 5;
  EXPECT_NE(test::error_of([&] { a.resolved(); }).find("5"), std::string::npos);  // 32 is not a multiple of 5
  const ModelConfig old = ModelConfig::from_json(
      R"({"kind":"mlp","hidden":8,"blocks":0,"channels":0,"squeeze_excitation":false,"geometric_head":true})");
  EXPECT_EQ(old.inputs, encode::InputKind::PLANES);
  EXPECT_EQ(old.input_planes(), 7);
  EXPECT_EQ(old.mixing, Mixing::NONE);  // files written before line mixing
  ModelConfig r = lines(config("resnet", 0, 2, 8));
  r.inputs = encode::InputKind::STATE;
  EXPECT_EQ(ModelConfig::from_json(r.to_json()).to_json(), r.to_json());
  EXPECT_EQ(r.describe(), "resnet 2x8 lines +state");
  std::string spirals = r.to_json();
  spirals.replace(spirals.find("\"lines\""), 7, "\"spirals\"");
  EXPECT_EQ(test::error_of([&] { ModelConfig::from_json(spirals); }),
            "unknown mixing 'spirals' (expected none | lines | rays)");
  EXPECT_EQ(rays(config("resnet", 0, 2, 8)).describe(), "resnet 2x8 rays");
  EXPECT_EQ(old.policy_head, PolicyHead::TYPES);  // files written before the pairs head
  ModelConfig p = pairs(config("resnet", 0, 2, 8));
  EXPECT_EQ(ModelConfig::from_json(p.to_json()).to_json(), p.to_json());
  EXPECT_EQ(p.describe(), "resnet 2x8 pairs");
  std::string squares = p.to_json();
  squares.replace(squares.find("\"pairs\""), 7, "\"squares\"");
  EXPECT_EQ(test::error_of([&] { ModelConfig::from_json(squares); }),
            "unknown policy head 'squares' (expected auto | types | pairs)");
  p.policy_head = PolicyHead::AUTO;
  EXPECT_EQ(test::error_of([&] { p.resolved(); }),
            "policy head 'auto' is train's choice (--policy-head), not a model's: types or pairs");
  ModelConfig mlp_pairs = config("mlp", 16, 0, 0);
  mlp_pairs.policy_head = PolicyHead::PAIRS;
  EXPECT_EQ(test::error_of([&] { mlp_pairs.resolved(); }), "policy head 'pairs' is a resnet option, not mlp's");
  ModelConfig conv_lines = config("conv", 16, 2, 8);
  conv_lines.mixing = Mixing::LINES;
  EXPECT_EQ(test::error_of([&] { conv_lines.resolved(); }), "mixing 'lines' is a resnet option, not conv's");
  try {
    ModelConfig::from_json(
        R"({"kind":"mlp","hidden":8,"blocks":0,"channels":0,"squeeze_excitation":false,"geometric_head":true,)"
        R"("inputs":"pictures"})");
    ADD_FAILURE() << "unknown inputs accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown inputs 'pictures' (expected planes | attacks | state | state+attacks)");
  }
}

TEST(Models, ATinyNetOverfitsASmallBatch) {
  const Batch b = batch_of_all(first_rows(64));
  for (const auto& c :
       {config("resnet", 0, 2, 16), lines(config("resnet", 0, 2, 16)), pairs(config("resnet", 0, 2, 16))}) {
    torch::manual_seed(1);
    auto net = make_model(c);
    torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(3e-3));
    double first = 0, last = 0;
    for (int step = 0; step < 150; ++step) {
      auto loss = torch::binary_cross_entropy_with_logits(net->forward(b.planes), b.targets);
      adam.zero_grad();
      loss.backward();
      adam.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    EXPECT_LT(last, first / 20) << c.describe() << ": " << first << " -> " << last;
  }
}

void write_floats(const std::string& path, const torch::Tensor& t) {
  const auto c = t.contiguous();
  std::ofstream(path, std::ios::binary).write(static_cast<const char*>(c.data_ptr()), std::streamsize(c.numel() * 4));
}

// The Python package (python/legalnet) against the C++ networks and encodings, for every
// architecture and input kind: its Dataset items are the C++ training batches of the same rows,
// its models give the C++ logits, encode_fen gives the C++ inputs of the same positions, and
// the exported TorchScript reproduces the logits in a process without legalnet on its path.
// One test per architecture (each runs a Python process), so that ctest runs them side by side.
struct PythonCase {
  std::string name;  // the test's name: letters, digits and underscores
  ModelConfig config;
};
void PrintTo(const PythonCase& c, std::ostream* os) { *os << c.config.describe(); }  // ctest -N's listing

std::vector<PythonCase> python_cases() {
  auto with = [](ModelConfig c, encode::InputKind inputs) {
    c.inputs = inputs;
    return c;
  };
  ModelConfig se = config("resnet", 0, 2, 8);
  se.squeeze_excitation = true;
  ModelConfig full_head = config("mlp", 16, 0, 0);
  full_head.geometric_head = false;
  ModelConfig rules = pairs(config("resnet", 0, 2, 8));
  rules.rules_head = true;
  ModelConfig paths = pairs(rays(config("resnet", 0, 2, 8)));
  paths.paths = true;
  paths.vetoes = true;
  paths.rules_head = true;
  paths.rule_lines = true;
  ModelConfig skip = paths;
  skip.input_skip = true;
  return {{"mlp", config("mlp", 16, 0, 0)},
          {"mlp_full_head", full_head},
          {"conv", config("conv", 16, 2, 4)},
          {"resnet_se", se},
          {"resnet_attacks", with(config("resnet", 0, 1, 8), encode::InputKind::ATTACKS)},
          {"mlp_state", with(config("mlp", 16, 0, 0), encode::InputKind::STATE)},
          {"resnet_state", with(config("resnet", 0, 2, 8), encode::InputKind::STATE)},
          {"attention_state", with(config("attention", 24, 2, 16), encode::InputKind::STATE)},
          {"attention_state_attacks", with(config("attention", 0, 1, 8), encode::InputKind::STATE_ATTACKS)},
          {"resnet_lines_state", with(lines(config("resnet", 0, 2, 8)), encode::InputKind::STATE)},
          {"resnet_rays_state", with(rays(config("resnet", 0, 2, 8)), encode::InputKind::STATE)},
          {"resnet_pairs_state", with(pairs(config("resnet", 0, 2, 8)), encode::InputKind::STATE)},
          {"resnet_pairs_rules_state", with(rules, encode::InputKind::STATE)},
          {"resnet_rays_pairs_paths_vetoes_rule_lines_state", with(paths, encode::InputKind::STATE)},
          {"resnet_rays_pairs_paths_vetoes_skip_rule_lines_state", with(skip, encode::InputKind::STATE)}};
}

class PythonPackage : public testing::TestWithParam<PythonCase> {};

TEST_P(PythonPackage, ReproducesTheCppNetworkAndInputs) {
  const std::string dir = test::temp_dir("python");
  torch::manual_seed(3);
  const ModelConfig& c = GetParam().config;
  const CompactPositions rows = first_rows(300);
  const std::vector<std::string> fens = test::sample_fens(/*seed=*/13, 200);
  auto net = make_model(c);
  net->eval();
  // Non-trivial batch-norm statistics, so that loading them is checked too; and an input skip
  // that adds something (it starts at zero).
  for (auto& b : net->named_buffers())
    if (b.key().find("running") != std::string::npos) b.value().uniform_(0.5, 1.5);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : net->named_parameters())
      if (p.key().find("input_skip") != std::string::npos) p.value().uniform_(-0.5, 0.5);
  }
  const Batch batch = batch_of_all(rows, c.inputs);
  const std::string name = dir + "/" + c.kind_name() + "-" + c.inputs_name();
  save_model(name + ".safetensors", c, *net, "{}");
  write_floats(name + ".inputs.f32", batch.planes);
  write_floats(name + ".targets.f32", batch.targets);
  write_floats(name + ".logits.f32", net->forward(batch.planes));
  // The inputs of the sample positions, as evaluate builds them.
  std::vector<float> fen_inputs(fens.size() * size_t(c.input_planes()) * encode::PLANE_SIZE);
  for (size_t i = 0; i < fens.size(); ++i)
    encode::write_inputs(c.inputs, encode::BoardState::of(chess::Position(fens[i])),
                         fen_inputs.data() + i * size_t(c.input_planes()) * encode::PLANE_SIZE);
  std::ofstream(name + ".fen_inputs.f32", std::ios::binary)
      .write(reinterpret_cast<const char*>(fen_inputs.data()), std::streamsize(fen_inputs.size() * 4));
  std::ofstream fen_file(name + ".fens");
  for (const auto& fen : fens) fen_file << fen << "\n";
  fen_file.close();
  const std::string out =
      test::run_command(test::python_path() + " " + LEGALNET_TEST_SOURCE_DIR + "/python/check_against_cpp.py " + name +
                        " " + tiny_dataset() + " " + std::to_string(rows.size()) + " 2>&1");
  EXPECT_NE(out.find("ok: " + c.describe()), std::string::npos) << out;
  // And back in C++: the file alone rebuilds the network.
  const LoadedModel loaded = load_model(name + ".safetensors", torch::kCPU);
  EXPECT_EQ(loaded.config.to_json(), c.resolved().to_json());
  loaded.net->eval();
  EXPECT_TRUE(torch::allclose(loaded.net->forward(batch.planes), net->forward(batch.planes)));
  // And a model Python wrote (its own random weights) gives Python's logits here.
  const LoadedModel from_python = load_model(name + ".from_python.safetensors", torch::kCPU);
  EXPECT_EQ(from_python.config.to_json(), c.resolved().to_json());
  from_python.net->eval();
  std::vector<float> expected(size_t(batch.planes.size(0)) * encode::MOVE_INDICES);
  std::ifstream(name + ".from_python.logits.f32", std::ios::binary)
      .read(reinterpret_cast<char*>(expected.data()), std::streamsize(expected.size() * 4));
  const auto python_logits = torch::from_blob(expected.data(), {batch.planes.size(0), encode::MOVE_INDICES});
  EXPECT_LT((from_python.net->forward(batch.planes) - python_logits).abs().max().item<float>(), 1e-5f) << name;
}

INSTANTIATE_TEST_SUITE_P(ModelFile, PythonPackage, testing::ValuesIn(python_cases()),
                         [](const testing::TestParamInfo<PythonCase>& info) { return info.param.name; });

// A file that is not a model, and one whose weights disagree with its config, are refused.
TEST(ModelFile, JunkAndLyingFilesAreRefused) {
  const std::string dir = test::temp_dir("python");
  std::ofstream(dir + "/junk.safetensors") << "junk";
  EXPECT_EQ(
      test::error_of([&] { load_model(dir + "/junk.safetensors", torch::kCPU); }).rfind(dir + "/junk.safetensors: ", 0),
      0u);

  // torch would load weights of another shape into the net without a word: the file's config
  // says 1x8, its weights are those of a 1x16 net.
  auto wide = make_model(config("resnet", 0, 1, 16));
  save_model(dir + "/lying.safetensors", config("resnet", 0, 1, 8), *wide, "{}");
  try {
    load_model(dir + "/lying.safetensors", torch::kCPU);
    ADD_FAILURE() << "loaded weights that disagree with the config";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is F32[16,7,3,3], the architecture resnet 1x8 makes F32[8,7,3,3]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace legalnet::nn

namespace legalnet::nn {
namespace {

// bf16 autocast computes the same network: logits close to fp32's, and a model evaluates in
// either precision whatever it was trained in.
TEST(Precision, Bf16LogitsAreCloseToFp32AndTheChoiceIsChecked) {
  torch::manual_seed(5);
  ModelConfig c = config("resnet", 0, 2, 16);
  c.inputs = encode::InputKind::STATE;
  auto net = make_model(c);
  net->eval();
  const Batch b = batch_of_all(first_rows(64), c.inputs);
  torch::NoGradGuard no_grad;
  const auto fp32 = forward_logits(*net, b.planes, Precision::FP32);
  const auto bf16 = forward_logits(*net, b.planes, Precision::BF16);
  EXPECT_EQ(bf16.scalar_type(), torch::kFloat32);
  EXPECT_LT((bf16 - fp32).abs().max().item<float>(), 0.1f);
  EXPECT_GT((bf16 - fp32).abs().max().item<float>(), 0.0f);  // bf16 really ran
  net->use_channels_last();
  EXPECT_TRUE(torch::allclose(forward_logits(*net, b.planes, Precision::FP32), fp32, 1e-5, 1e-5));
  EXPECT_EQ(resolve_precision("fp32", torch::kCPU), Precision::FP32);
  const Precision native = cpu_has_native_bf16() ? Precision::BF16 : Precision::FP32;
  EXPECT_EQ(resolve_precision("auto", torch::kCPU), native);
  // A resnet on the board kernels: fp32 wherever they run (AVX2 or better) short of AMX; an
  // explicit choice is kept.
  EXPECT_EQ(resolve_precision("auto", torch::kCPU, true), cpu_has_amx_bf16() ? Precision::BF16 : Precision::FP32);
  EXPECT_EQ(resolve_precision("bf16", torch::kCPU, true), Precision::BF16);
  board_isa_cap(BoardIsa::BASELINE);  // no board kernels worth running: as without them
  EXPECT_EQ(resolve_precision("auto", torch::kCPU, true), native);
  board_isa_cap(BoardIsa::AVX512);
  // Resolved by the device's type alone, so this holds on a machine without a GPU.
  EXPECT_EQ(resolve_precision("auto", torch::Device(torch::kCUDA)), Precision::TF32);
  EXPECT_EQ(resolve_precision("auto", torch::Device(torch::kCUDA), true), Precision::TF32);
  try {
    resolve_precision("fp16", torch::kCPU);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown precision 'fp16' (expected auto | fp32 | tf32 | bf16)");
  }
  try {  // TF32 is a CUDA format: refused on a CPU rather than silently run as fp32
    resolve_precision("tf32", torch::kCPU);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--precision tf32: TF32 is a CUDA tensor-core format; on cpu use fp32 or bf16");
  }
}

// Every name of each choice table (issue 25) reads back as its value and the value as its name;
// an unknown name is one line naming the choices.
template <typename Table, typename Parse>
void expect_names_round_trip(const Table& table, Parse parse, const std::string& unknown_message) {
  std::set<std::string> names;
  for (const auto& row : table) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " is in its table twice";
    EXPECT_EQ(parse(row.name), row.value) << row.name;
    EXPECT_STREQ(choice_of(table, row.value).name, row.name);
  }
  try {
    parse("nonesuch\x1b");
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.what(), unknown_message);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(Choices, EveryNameRoundTripsAndAnUnknownOneFails) {
  expect_names_round_trip(MODEL_SPECS, parse_model_kind,
                          "unknown model 'nonesuch\\x1b' (expected mlp | conv | resnet | attention)");
  expect_names_round_trip(PRECISIONS, parse_precision,
                          "unknown precision 'nonesuch\\x1b' (expected auto | fp32 | tf32 | bf16)");
  // A value outside the table (a file or a cast that went wrong) is an error, never a default.
  EXPECT_EQ(test::error_of([] { model_spec(ModelKind(99)); }), "choice 99 has no name");
  EXPECT_EQ(test::error_of([] { precision_name(Precision(99)); }), "choice 99 has no name");
}

// Each model kind's row builds its own net and agrees with itself: the resolved sizes, the
// description, the JSON round trip, and weights at least min_parameters().
TEST(Choices, EveryModelKindBuildsItsOwnNet) {
  for (const ModelSpec& spec : MODEL_SPECS) {
    ModelConfig c;
    c.kind = spec.value;
    if (spec.uses_blocks) c.blocks = 1, c.channels = 8;
    if (spec.value == ModelKind::MLP || spec.value == ModelKind::CONV) c.hidden = 16;
    const ModelConfig r = c.resolved();
    EXPECT_EQ(r.describe().rfind(spec.name, 0), 0u) << r.describe();
    EXPECT_EQ(ModelConfig::from_json(r.to_json()).describe(), r.describe());
    EXPECT_GT(r.forward_flops(), 0);
    auto net = make_model(r);
    EXPECT_GE(count_parameters(*net), r.min_parameters()) << r.describe();
    EXPECT_EQ(net->forward(torch::zeros({2, r.input_planes(), 8, 8})).sizes(), (std::vector<int64_t>{2, 4096}));
  }
  // Model files name their input kind "input_kind"; files written before said "inputs".
  ModelConfig c;
  c.kind = ModelKind::MLP;
  c.hidden = 8;
  c.inputs = encode::InputKind::ATTACKS;
  const std::string json = c.to_json();
  EXPECT_NE(json.find(R"("input_kind":"attacks")"), std::string::npos) << json;
  std::string old = json;
  old.replace(old.find("input_kind"), 10, "inputs");
  EXPECT_EQ(ModelConfig::from_json(old).inputs, encode::InputKind::ATTACKS);
}

}  // namespace
}  // namespace legalnet::nn
