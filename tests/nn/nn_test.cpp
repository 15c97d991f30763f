#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chess/movegen.h"
#include "data/dataset_reader.h"
#include "run/tensorize/tensorize.h"
#include "encode/encode.h"
#include "encode/inputs.h"
#include "run/gen_moves/gen_moves.h"
#include "train/batches.h"
#include "train/distributed.h"
#include "run/evaluate.h"
#include "nn/device.h"
#include "nn/loss.h"
#include "train/metrics.h"
#include "train/run_folder.h"
#include "train/tensorboard.h"
#include "nn/model_file.h"
#include "nn/models.h"
#include "nn/precision.h"
#include "train/stream.h"
#include "run/train.h"
#include "support/helpers.h"
#include "util/choices.h"
#include "util/error.h"

namespace legalnet::nn {
using namespace train;
using namespace run;
namespace {

// A model on the predecessor's 7 planes unless the test asks for other inputs (with()).
ModelConfig config(const std::string& kind, int hidden, int blocks, int channels) {
  ModelConfig c;
  c.inputs = encode::InputKind::PLANES;
  c.kind = parse_model_kind(kind);
  c.hidden = hidden;
  c.blocks = blocks;
  c.channels = channels;
  return c.resolved();
}

// A resnet whose blocks mix along lines (ModelConfig::mixing).
ModelConfig lines(ModelConfig c) {
  c.mixing = "lines";
  return c.resolved();
}

// A small dataset shared by the tests of this file.
const std::string& tiny_dataset() {
  static const std::string path = [] {
    const std::string dir = test::temp_dir("nn");
    GenMovesOptions g;
    g.games = 6;
    g.seed = 21;
    g.out = dir + "/g.pgn";
    g.quiet = true;
    run_gen_moves(g);
    TensorizeOptions t;
    t.pgn_files = {g.out};
    t.out = dir + "/d.h5";
    t.quiet = true;
    run_tensorize(t);
    return t.out;
  }();
  return path;
}

// The first `max_rows` rows of the tiny dataset, and all of them as one batch.
CompactPositions first_rows(uint64_t max_rows) {
  LoadOptions load;
  load.quiet = true;
  load.max_rows = max_rows;
  return load_positions({tiny_dataset()}, load);
}

Batch batch_of_all(const CompactPositions& rows, encode::InputKind inputs = encode::InputKind::PLANES) {
  std::vector<uint32_t> all(rows.size());
  std::iota(all.begin(), all.end(), 0u);
  return make_batch(rows, all.data(), all.size(), false, inputs);
}

// Options to evaluate `model` on the tiny dataset's first `positions` rows, writing dir/report.json.
EvaluateOptions tiny_evaluation(const std::string& model, const std::string& dir, uint64_t positions) {
  EvaluateOptions o;
  o.model = model;
  o.data = {tiny_dataset()};
  o.max_positions = positions;
  o.device = "cpu";
  o.compute_precision = Precision::FP32;  // figures computed by hand in fp32 (bf16: Precision.Bf16LogitsAreClose...)
  o.threads = 1;
  o.quiet = true;
  o.report = dir + "/report.json";
  return o;
}

TEST(Models, ShapesAndFixedOffIndices) {
  torch::manual_seed(0);
  ModelConfig attacks = config("conv", 16, 1, 8);
  attacks.inputs = encode::InputKind::ATTACKS;
  ModelConfig attention = config("attention", 0, 2, 16);
  attention.inputs = encode::InputKind::STATE;
  ModelConfig resnet_state = config("resnet", 0, 2, 8);
  resnet_state.inputs = encode::InputKind::STATE_ATTACKS;
  for (const auto& c : {config("mlp", 32, 0, 0), config("conv", 16, 2, 8), config("resnet", 0, 2, 8), attacks,
                        attention, resnet_state, lines(config("resnet", 0, 2, 8))}) {
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

  for (const bool with_lines : {false, true}) {
    ResidualBlock block(8, /*squeeze_excitation=*/false, with_lines);
    block->eval();
    const auto a = torch::randn({1, 8, 8, 8});
    auto b = a.clone();
    b.index_put_({0, torch::indexing::Slice(), 0, 0}, 5.0);  // square a1's features
    const auto delta = (block(b) - block(a)).abs().amax(1)[0];
    for (const auto& [row, column] : {std::pair{7, 7}, std::pair{0, 7}, std::pair{7, 0}})
      EXPECT_EQ(delta[row][column].item<float>() > 0, with_lines) << row << "," << column << " lines " << with_lines;
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
  for (const auto& c : {config("mlp", 32, 0, 0), full, config("conv", 16, 2, 8), config("resnet", 0, 2, 8), attention,
                        lines(config("resnet", 0, 2, 8))})
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
  EXPECT_EQ(old.mixing, "none");  // files written before line mixing
  ModelConfig r = lines(config("resnet", 0, 2, 8));
  r.inputs = encode::InputKind::STATE;
  EXPECT_EQ(ModelConfig::from_json(r.to_json()).to_json(), r.to_json());
  EXPECT_EQ(r.describe(), "resnet 2x8 lines +state");
  r.mixing = "spirals";
  EXPECT_EQ(test::error_of([&] { r.resolved(); }), "unknown mixing 'spirals' (expected none | lines)");
  ModelConfig conv_lines = config("conv", 16, 2, 8);
  conv_lines.mixing = "lines";
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
  for (const auto& c : {config("resnet", 0, 2, 16), lines(config("resnet", 0, 2, 16))}) {
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

TrainOptions tiny_run(const std::string& out) {
  TrainOptions o;
  o.data = {tiny_dataset()};
  o.out = out;
  o.model = config("resnet", 0, 1, 8);
  o.batch_size = 32;
  o.max_steps = 24;
  o.epochs = 100;
  o.eval_every = 8;
  o.checkpoint_every = 5;
  o.val_fraction = 0.2;
  o.threads = 1;
  o.quiet = true;
  return o;
}

std::vector<torch::Tensor> weights(const std::string& path) {
  auto m = load_model(path, torch::kCPU);
  std::vector<torch::Tensor> w;
  for (const auto& p : m.net->parameters()) w.push_back(p.detach().clone());
  for (const auto& b : m.net->buffers()) w.push_back(b.detach().clone());
  return w;
}

// Each row of a batch as bytes, to compare the rows of two sources as multisets.
std::vector<std::string> row_keys(const Batch& b) {
  std::vector<std::string> keys;
  for (int64_t i = 0; i < b.planes.size(0); ++i) {
    const auto planes = b.planes[i].contiguous(), mask = b.targets[i].contiguous();
    keys.push_back(std::string(static_cast<const char*>(planes.data_ptr()), size_t(planes.numel()) * 4) +
                   std::string(static_cast<const char*>(mask.data_ptr()), size_t(mask.numel()) * 4));
  }
  return keys;
}

// Every row of the dataset (each RowWeights::copies times), as row_keys.
std::multiset<std::string> all_row_keys(const RowWeights& weights) {
  const CompactPositions rows = first_rows(/*max_rows=*/0);  // 0: all
  std::multiset<std::string> keys;
  for (uint32_t r = 0; r < rows.size(); ++r)
    for (int c = 0; c < weights.copies(rows.in_check[r], rows.rare[r]); ++c)
      keys.insert(row_keys(make_batch(rows, &r, 1, false, encode::InputKind::PLANES))[0]);
  return keys;
}

StreamOptions tiny_stream(const RowWeights& weights, BatchSlice slice = {}) {
  StreamOptions o;
  o.paths = {tiny_dataset()};
  o.batch_size = 1;
  o.seed = 9;
  o.weights = weights;
  o.shuffle_buffer = 50;  // far fewer than the rows, so rows pass through it
  o.block_rows = 256;     // several blocks
  o.slice = slice;
  return o;
}

// One epoch of a stream, batch by batch.
std::vector<std::string> stream_epoch(StreamBatches& stream, int64_t epoch) {
  std::vector<std::string> keys;
  for (int64_t step = epoch * stream.steps_per_epoch(); step < (epoch + 1) * stream.steps_per_epoch(); ++step)
    for (auto& k : row_keys(stream.batch(step, false))) keys.push_back(std::move(k));
  return keys;
}

// The rows flagged rare are those with a legal castling or en-passant move, by the move generator.
TEST(TrainingData, RareRowsAreThoseWithALegalCastlingOrEnPassantMove) {
  const CompactPositions rows = first_rows(0);
  const data::DatasetReader reader(tiny_dataset());
  const auto positions = reader.read_board_positions(0, rows.size());
  size_t rare = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    bool expected = false;
    for (chess::Move m : chess::MoveList(positions[r]))
      expected |= m.kind() == chess::MoveKind::CASTLING || m.kind() == chess::MoveKind::EN_PASSANT;
    ASSERT_EQ(bool(rows.rare[r]), expected) << positions[r].fen();
    rare += expected;
  }
  EXPECT_GT(rare, 0u);
  EXPECT_EQ(RowWeights({4, 3}).copies(true, true), 4);
  EXPECT_EQ(RowWeights({4, 3}).copies(false, true), 3);
  EXPECT_EQ(RowWeights({4, 3}).copies(false, false), 1);
}

TEST(Stream, AnEpochPassesEveryRowOnceInAShuffledOrder) {
  for (const RowWeights weights : {RowWeights{1, 1}, RowWeights{3, 2}}) {
    StreamBatches stream(tiny_stream(weights));
    const auto expected = all_row_keys(weights);
    ASSERT_EQ(stream.rows_per_epoch(), expected.size());
    const auto first = stream_epoch(stream, 0), second = stream_epoch(stream, 1);
    EXPECT_EQ(std::multiset<std::string>(first.begin(), first.end()), expected) << "weights " << weights.check;
    EXPECT_EQ(std::multiset<std::string>(second.begin(), second.end()), expected);
    EXPECT_NE(first, second) << "two epochs in the same order";
    EXPECT_NE(first, std::vector<std::string>(expected.begin(), expected.end())) << "not shuffled";
    StreamBatches again(tiny_stream(weights));
    EXPECT_EQ(stream_epoch(again, 0), first) << "not reproducible";
  }
}

TEST(Stream, RanksReadDisjointPartsThatMakeTheWhole) {
  StreamBatches rank0(tiny_stream({}, {0, 2})), rank1(tiny_stream({}, {1, 2}));
  const auto a = stream_epoch(rank0, 0), b = stream_epoch(rank1, 0);
  std::multiset<std::string> both(a.begin(), a.end());
  both.insert(b.begin(), b.end());
  EXPECT_EQ(both, all_row_keys({}));
  EXPECT_GT(a.size(), 0u);
  EXPECT_GT(b.size(), 0u);
}

TEST(Stream, AStreamStartedMidwayContinuesAsTheUninterruptedOne) {
  StreamOptions o = tiny_stream(RowWeights{2, 1});
  o.batch_size = 16;
  StreamBatches straight(o), resumed(o);
  const int64_t steps = straight.steps_per_epoch();
  std::vector<std::vector<std::string>> expected;
  for (int64_t step = 0; step < steps + 5; ++step) expected.push_back(row_keys(straight.batch(step, false)));
  for (int64_t start : {int64_t(3), steps + 2}) {
    StreamBatches fresh(o);
    for (int64_t s = start; s < start + 2; ++s)
      EXPECT_EQ(row_keys(fresh.batch(s, false)), expected[size_t(s)]) << "started at " << start;
  }
  for (int64_t s = steps - 2; s < steps + 5; ++s) EXPECT_EQ(row_keys(resumed.batch(s, false)), expected[size_t(s)]);
}

TEST(Train, ResumedRunEndsWithTheSameWeights) {
  for (const std::string mode : {"memory", "stream"}) {
    const std::string dir = test::temp_dir("resume-" + mode);
    TrainOptions straight = tiny_run(dir + "/straight");
    straight.data_mode = mode == "memory" ? DataMode::MEMORY : DataMode::STREAM;
    run_train(straight);
    TrainOptions first = tiny_run(dir + "/resumed");
    first.data_mode = straight.data_mode;
    first.stop_at_step = 11;
    run_train(first);
    EXPECT_FALSE(std::filesystem::exists(dir + "/resumed/model.safetensors"));
    TrainOptions second = tiny_run(dir + "/resumed");
    second.data_mode = straight.data_mode;
    second.resume = true;
    run_train(second);
    const auto a = weights(dir + "/straight/model.safetensors"), b = weights(dir + "/resumed/model.safetensors");
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7)) << "tensor " << i;
    // metrics.csv has a row every 8 steps and at the end, header once.
    std::ifstream csv(dir + "/resumed/metrics.csv");
    int lines = 0;
    for (std::string line; std::getline(csv, line);) ++lines;
    EXPECT_GE(lines, 4);
  }
}

TEST(Train, RanksComeFromTorchrunOrSrunVariables) {
  for (const char* name :
       {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID",
        "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "MASTER_ADDR", "MASTER_PORT"})
    unsetenv(name);
  ProcessGroupSpec one = process_group_from_environment();
  EXPECT_EQ(one.world_size, 1);
  EXPECT_EQ(one.rank, 0);

  setenv("SLURM_NTASKS", "6", 1);
  setenv("SLURM_PROCID", "4", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_TASKS_PER_NODE", "3(x2)", 1);
  setenv("MASTER_ADDR", "node17", 1);
  setenv("MASTER_PORT", "23456", 1);
  const ProcessGroupSpec srun = process_group_from_environment();
  EXPECT_EQ(srun.world_size, 6);
  EXPECT_EQ(srun.rank, 4);
  EXPECT_EQ(srun.local_rank, 1);
  EXPECT_EQ(srun.local_world_size, 3);
  EXPECT_EQ(srun.master_addr, "node17");
  EXPECT_EQ(srun.master_port, 23456);

  // torchrun's names win over srun's (torchrun inside a Slurm job).
  setenv("WORLD_SIZE", "2", 1);
  setenv("RANK", "1", 1);
  const ProcessGroupSpec torchrun = process_group_from_environment();
  EXPECT_EQ(torchrun.world_size, 2);
  EXPECT_EQ(torchrun.rank, 1);
  EXPECT_EQ(torchrun.local_rank, 1);

  setenv("RANK", "one", 1);
  try {
    process_group_from_environment();
    ADD_FAILURE() << "accepted RANK=one";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "environment variable RANK='one' is not a count");
  }
}

// A TCP port that was free a moment ago, for a rendezvous on loopback.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw std::runtime_error("no free port");
  close(fd);
  return ntohs(address.sin_port);
}

TEST(Train, TwoProcessesTakeTheStepsOfOneWithTheCombinedBatch) {
  const std::string dir = test::temp_dir("ranks");
  // An MLP: batch-norm statistics would differ between a batch of 32 and two of 16. fp32: in
  // bf16 a sum over 32 rows and two sums over 16 round differently.
  TrainOptions one = tiny_run(dir + "/one");
  one.model = config("mlp", 48, 0, 0);
  one.compute_precision = Precision::FP32;
  one.batch_size = 32;
  one.max_steps = 15;
  run_train(one);

  const std::string train = test::bin_dir() + "/train";
  const std::string options = fmt::format(
      "--data {} --out {}/two --arch mlp --hidden 48 --inputs planes --precision fp32 --batch-size 16 --max-steps 15 "
      "--epochs 100 "
      "--eval-every 8 "
      "--checkpoint-every 5 --val-fraction 0.2 --threads 1 --quiet",
      tiny_dataset(), dir);
  const std::string env =
      fmt::format("OMP_WAIT_POLICY=PASSIVE WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={}", free_port());
  test::run_command(fmt::format(
      "{0} RANK=1 {1} {2} & rank1=$!; {0} RANK=0 {1} {2}; rank0=$?; wait $rank1 && exit $rank0", env, train, options));
  const auto a = weights(dir + "/one/model.safetensors"), b = weights(dir + "/two/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-4, 1e-6))
        << "tensor " << i << ": max difference " << (a[i] - b[i]).abs().max().item<double>();
  // The same rows of metrics, validation included (each rank validates half the rows).
  const std::string csv_one = test::read_file(dir + "/one/metrics.csv"),
                    csv_two = test::read_file(dir + "/two/metrics.csv");
  auto column = [](const std::string& csv, int index) {
    std::vector<std::string> values;
    std::istringstream lines(csv);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string field;
      for (int i = 0; i <= index; ++i) std::getline(fields, field, ',');
      values.push_back(field);
    }
    return values;
  };
  for (int c : {0, 2, 3, 4, 5, 6}) EXPECT_EQ(column(csv_one, c), column(csv_two, c)) << "column " << c;
  // One stream of TensorBoard events, rank 0's: its file_version record (step 0), then a
  // record at each step of metrics.csv.
  int event_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/two"))
    event_files += entry.path().filename().string().find("tfevents") != std::string::npos;
  EXPECT_EQ(event_files, 1);
  const std::string events = test::read_file(dir + "/two/" + RunFolder::EVENTS_FILE);
  EXPECT_EQ(tensorboard::records_through_step(events, 1 << 30), events.size());
  std::vector<std::string> steps;
  for (size_t at = 0; at + 16 <= events.size();) {
    uint64_t length = 0;
    std::memcpy(&length, events.data() + at, 8);
    steps.push_back(std::to_string(tensorboard::event_step(events.substr(at + 12, length)).value_or(-1)));
    at += 16 + length;
  }
  std::vector<std::string> rows = column(csv_two, 0);
  rows.front() = "0";  // the header's place
  EXPECT_EQ(steps, rows);
}

TEST(Train, RefusesToOverwriteAFinishedRunAndBadData) {
  const std::string dir = test::temp_dir("refuse");
  run_train(tiny_run(dir + "/run"));
  try {
    run_train(tiny_run(dir + "/run"));
    ADD_FAILURE() << "overwrote";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already holds a run"), std::string::npos);
  }
  TrainOptions forced = tiny_run(dir + "/run");
  forced.force = true;
  EXPECT_NO_THROW(run_train(forced));
  EXPECT_FALSE(std::filesystem::exists(dir + "/run/replaced")) << "the replaced run outlived the new model";
  std::ofstream(dir + "/file") << "x";
  try {
    run_train(tiny_run(dir + "/file"));
    ADD_FAILURE() << "accepted a file as the run folder";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--out '" + dir + "/file' is a file; it must be a run folder (new or existing)");
  }
  std::ofstream(dir + "/text.h5") << "not a dataset";
  TrainOptions bad = tiny_run(dir + "/bad");
  bad.data = {dir + "/text.h5"};
  try {
    run_train(bad);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/text.h5: not an HDF5 file (or truncated)");
  }
}

TEST(Train, ADivergingLossStopsWithAClearMessage) {
  const std::string dir = test::temp_dir("nan");
  TrainOptions o = tiny_run(dir + "/run");
  o.optimizer = Optimizer::SGD;
  o.lr = 1e30;
  o.clip = 0;
  o.warmup = 0;
  try {
    run_train(o);
    ADD_FAILURE() << "trained";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the loss became"), std::string::npos) << e.what();
    // No checkpoint exists yet: the message must not name one.
    EXPECT_NE(std::string(e.what()).find("no checkpoint was written yet"), std::string::npos) << e.what();
    EXPECT_FALSE(std::filesystem::exists(dir + "/run/checkpoint.safetensors"));
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
TEST(ModelFile, ThePythonPackageReproducesTheCppNetworksAndInputs) {
  const std::string dir = test::temp_dir("python");
  torch::manual_seed(3);
  auto with = [](ModelConfig c, encode::InputKind inputs) {
    c.inputs = inputs;
    return c;
  };
  ModelConfig se = config("resnet", 0, 2, 8);
  se.squeeze_excitation = true;
  ModelConfig full_head = config("mlp", 16, 0, 0);
  full_head.geometric_head = false;
  const CompactPositions rows = first_rows(300);
  const std::vector<std::string> fens = test::sample_fens(/*seed=*/13, 200);
  for (const auto& c : {config("mlp", 16, 0, 0), full_head, config("conv", 16, 2, 4), se,
                        with(config("resnet", 0, 1, 8), encode::InputKind::ATTACKS),
                        with(config("mlp", 16, 0, 0), encode::InputKind::STATE),
                        with(config("resnet", 0, 2, 8), encode::InputKind::STATE),
                        with(config("attention", 24, 2, 16), encode::InputKind::STATE),
                        with(config("attention", 0, 1, 8), encode::InputKind::STATE_ATTACKS),
                        with(lines(config("resnet", 0, 2, 8)), encode::InputKind::STATE)}) {
    auto net = make_model(c);
    net->eval();
    // Non-trivial batch-norm statistics, so that loading them is checked too.
    for (auto& b : net->named_buffers())
      if (b.key().find("running") != std::string::npos) b.value().uniform_(0.5, 1.5);
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
        test::run_command(test::python_path() + " " + LEGALNET_TEST_SOURCE_DIR + "/python/check_against_cpp.py " +
                          name + " " + tiny_dataset() + " " + std::to_string(rows.size()) + " 2>&1");
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
  std::ofstream(dir + "/junk.safetensors") << "junk";
  EXPECT_EQ(test::error_of([&] { load_model(dir + "/junk.safetensors", torch::kCPU); })
                .rfind(dir + "/junk.safetensors: ", 0),
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

// A model made for the test: every possibly-legal index gets probability 0.6, so every figure
// of the report can be computed by hand from the legal-move counts.
TEST(Evaluate, MetricsOfAConstantModelMatchHandComputedValues) {
  const std::string dir = test::temp_dir("evaluate");
  const ModelConfig c = config("mlp", 8, 0, 0);
  auto net = make_model(c);
  const double logit = std::log(0.6 / 0.4);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : net->named_parameters()) p.value().zero_();
    for (auto& p : net->named_parameters())
      if (p.key() == "out.bias") p.value().fill_(logit);
  }
  save_model(dir + "/constant.safetensors", c, *net, "{}");

  EvaluateOptions o = tiny_evaluation(dir + "/constant.safetensors", dir, 200);
  o.games = 3;
  testing::internal::CaptureStdout();
  run_evaluate(o);
  const std::string table = testing::internal::GetCapturedStdout();
  const auto report = nlohmann::json::parse(test::read_file(o.report));
  const auto& d = report["dataset"];

  data::DatasetReader reader(tiny_dataset());
  const uint64_t n = 200;
  std::vector<uint8_t> masks(n * encode::MOVE_INDICES);
  reader.read_legal_moves(0, n, masks.data());
  double legal = 0, legal_share = 0;
  for (uint64_t r = 0; r < n; ++r) {
    double l = 0;
    for (int k = 0; k < encode::MOVE_INDICES; ++k) l += masks[r * encode::MOVE_INDICES + k];
    legal += l;
    legal_share += l * 0.6 / (1792 * 0.6 + 2304 / (1 + std::exp(20.0)));
  }
  const double off = -std::log1p(-1 / (1 + std::exp(20.0)));
  const double bce = (legal * -std::log(0.6) + (1792.0 * n - legal) * -std::log(0.4) + 2304.0 * n * off) / (4096.0 * n);
  EXPECT_EQ(d["positions"].get<uint64_t>(), n);
  EXPECT_NEAR(d["bce"].get<double>(), bce, 1e-6);
  EXPECT_DOUBLE_EQ(d["recall"].get<double>(), 1.0);
  EXPECT_NEAR(d["precision"].get<double>(), legal / (1792.0 * n), 1e-9);
  EXPECT_DOUBLE_EQ(d["exact_set_accuracy"].get<double>(), 0.0);
  EXPECT_NEAR(d["legal_probability_mass"].get<double>(), legal_share / n, 1e-6);
  EXPECT_EQ(d["false_positives"]["not a move of that piece"]["count"].get<uint64_t>() +
                d["false_positives"]["blocked"]["count"].get<uint64_t>() +
                d["false_positives"]["leaves or puts own king in check"]["count"].get<uint64_t>() +
                d["false_positives"]["castling / en passant rules"]["count"].get<uint64_t>(),
            uint64_t(1792.0 * n - legal));
  EXPECT_EQ(report["games"]["games"].get<int>(), 3);
  EXPECT_EQ(report["model"]["description"].get<std::string>(), "mlp 8");
  EXPECT_NE(table.find("plies before the first illegal move"), std::string::npos);

  // The same seed plays the same games; a missing dataset is refused by name.
  testing::internal::CaptureStdout();
  const std::string again = run_evaluate(o);
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(nlohmann::json::parse(again)["games"]["mean_plies_before_first_illegal"],
            report["games"]["mean_plies_before_first_illegal"]);
  // The headline first; the games' picks in and out of check add up; the table says which rows.
  const auto& g = report["games"];
  EXPECT_EQ(g["picks_in_check"].get<uint64_t>() + g["picks_not_in_check"].get<uint64_t>(),
            g["model_picks"].get<uint64_t>());
  EXPECT_EQ(g["illegal_picks_in_check"].get<uint64_t>() + g["illegal_picks_not_in_check"].get<uint64_t>(),
            g["illegal_picks"].get<uint64_t>());
  EXPECT_EQ(d["rows_in_data"].get<uint64_t>(), reader.num_positions());
  const std::string first = fmt::format("the first 200 of {} held-out rows", reader.num_positions());
  ASSERT_NE(table.find(first), std::string::npos) << table;
  EXPECT_LT(table.find("Headline"), table.find("On " + first));
  EXPECT_LT(table.find("games ending by the rules"), table.find("plies before the first illegal move"));
  // Over the whole set the rare kinds are counted in the one pass, with the second pass's figures.
  o.max_positions = 0;
  o.games = 0;
  testing::internal::CaptureStdout();
  const auto whole = nlohmann::json::parse(run_evaluate(o));
  const std::string whole_table = testing::internal::GetCapturedStdout();
  EXPECT_EQ(whole["dataset"]["positions"].get<uint64_t>(), reader.num_positions());
  EXPECT_NE(whole_table.find(fmt::format("all {} held-out rows", reader.num_positions())), std::string::npos);
  EXPECT_EQ(whole["dataset"]["rare_moves_whole_set"], d["rare_moves_whole_set"]);

  o.data = {dir + "/missing.h5"};
  EXPECT_EQ(test::error_of([&] { run_evaluate(o); }), dir + "/missing.h5: cannot open: no such file or not readable");
}

// evaluate builds a model's inputs from positions (dataset row -> Position -> BoardState),
// train from compact rows (dataset row -> BoardState): for every input kind the two must be
// the same bytes, and a model must score the same (its outputs mapped back to board order in
// evaluate, its targets mapped into its frame in train).
TEST(Evaluate, InputsFromPositionsAreThoseOfTrainingRowsForEveryKind) {
  const CompactPositions rows = first_rows(300);
  const data::DatasetReader reader(tiny_dataset());
  const std::vector<chess::Position> positions = reader.read_board_positions(0, rows.size());
  for (int k = 0; k < encode::INPUT_KIND_NB; ++k) {
    const auto kind = encode::InputKind(k);
    const size_t floats = size_t(encode::input_spec(kind).planes) * encode::PLANE_SIZE;
    std::vector<float> from_row(floats), from_position(floats);
    for (size_t r = 0; r < rows.size(); ++r) {
      rows.expand_inputs(r, kind, from_row.data());
      encode::write_inputs(kind, encode::BoardState::of(positions[r]), from_position.data());
      ASSERT_EQ(from_row, from_position) << encode::input_spec(kind).name << " row " << r;
    }
  }
  for (auto kind : {encode::InputKind::ATTACKS, encode::InputKind::STATE}) {
    const std::string dir = test::temp_dir(std::string("inputs-") + encode::input_spec(kind).name);
    ModelConfig c = config("resnet", 0, 1, 8);
    c.inputs = kind;
    torch::manual_seed(4);
    auto net = make_model(c);
    save_model(dir + "/model.safetensors", c, *net, "{}");
    const EvaluateOptions o = tiny_evaluation(dir + "/model.safetensors", dir, rows.size());
    testing::internal::CaptureStdout();
    run_evaluate(o);
    testing::internal::GetCapturedStdout();
    const auto report = nlohmann::json::parse(test::read_file(o.report));
    const LoadedModel loaded = load_model(o.model, torch::kCPU);
    const Evaluation from_rows = evaluate_loss(*loaded.net, rows, 64, torch::kCPU, kind, Precision::FP32);
    EXPECT_NEAR(report["dataset"]["bce"].get<double>(), from_rows.loss, 1e-6 * from_rows.loss);
    EXPECT_EQ(report["model"]["input_kind"].get<std::string>(), encode::input_spec(kind).name);
    EXPECT_EQ(report["model"]["input_kind_from_move_generator"].get<bool>(), kind == encode::InputKind::ATTACKS);
    // The rare kinds are counted over every row of the set.
    EXPECT_EQ(report["dataset"]["rare_moves_whole_set"]["positions_scanned"].get<uint64_t>(), reader.num_positions());
  }
}

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
  EXPECT_EQ(resolve_precision("auto", torch::kCPU), cpu_has_native_bf16() ? Precision::BF16 : Precision::FP32);
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
  const auto optimizer = [](std::string_view name) { return find_choice(run::OPTIMIZERS, name, "optimizer").value; };
  expect_names_round_trip(run::OPTIMIZERS, optimizer, "unknown optimizer 'nonesuch\\x1b' (expected adam | adamw | sgd)");
  const auto mode = [](std::string_view name) { return find_choice(run::DATA_MODES, name, "data mode").value; };
  expect_names_round_trip(run::DATA_MODES, mode, "unknown data mode 'nonesuch\\x1b' (expected auto | memory | stream)");
  // Every model kind has its default learning rate, positive.
  for (const ModelSpec& spec : MODEL_SPECS) EXPECT_GT(choice_of(run::DEFAULT_LRS, spec.value).lr, 0) << spec.name;
  // A value outside the table (a file or a cast that went wrong) is an error, never a default.
  EXPECT_THROW(model_spec(ModelKind(99)), Error);
  EXPECT_THROW(precision_name(Precision(99)), Error);
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
