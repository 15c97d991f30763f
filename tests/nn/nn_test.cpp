#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/dataset_reader.h"
#include "data/tensorize.h"
#include "encode/encode.h"
#include "games/gen_moves.h"
#include "nn/batches.h"
#include "nn/distributed.h"
#include "nn/evaluator.h"
#include "nn/metrics.h"
#include "nn/model_file.h"
#include "nn/models.h"
#include "nn/stream.h"
#include "nn/trainer.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet::nn {
namespace {

ModelConfig config(const std::string& kind, int hidden, int blocks, int channels) {
  ModelConfig c;
  c.kind = kind;
  c.hidden = hidden;
  c.blocks = blocks;
  c.channels = channels;
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
    t.inputs = {g.out};
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

Batch batch_of_all(const CompactPositions& rows, int input_planes = encode::PLANES) {
  std::vector<uint32_t> all(rows.size());
  std::iota(all.begin(), all.end(), 0u);
  return make_batch(rows, all.data(), all.size(), false, input_planes);
}

// Options to evaluate `model` on the tiny dataset's first `positions` rows, writing dir/report.json.
EvaluateOptions tiny_evaluation(const std::string& model, const std::string& dir, uint64_t positions) {
  EvaluateOptions o;
  o.model = model;
  o.data = {tiny_dataset()};
  o.max_positions = positions;
  o.device = "cpu";
  o.threads = 1;
  o.quiet = true;
  o.report = dir + "/report.json";
  return o;
}

TEST(Models, ShapesAndFixedOffIndices) {
  torch::manual_seed(0);
  ModelConfig attacks = config("conv", 16, 1, 8);
  attacks.inputs = "attacks";
  for (const auto& c : {config("mlp", 32, 0, 0), config("conv", 16, 2, 8), config("resnet", 0, 2, 8), attacks}) {
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
  for (int i = 0; i < 4096; ++i) types += move_type_of(i) >= 0;
  EXPECT_EQ(types, 1792);
}

TEST(Models, TheConfigRoundTripsAndOldFilesMeanThePredecessorsPlanes) {
  ModelConfig c = config("conv", 64, 2, 8);
  c.inputs = "attacks";
  EXPECT_EQ(ModelConfig::from_json(c.to_json()).to_json(), c.to_json());
  EXPECT_EQ(c.input_planes(), 10);
  EXPECT_EQ(c.describe(), "conv 2x8 fc 64 +attacks");
  const ModelConfig old = ModelConfig::from_json(
      R"({"kind":"mlp","hidden":8,"blocks":0,"channels":0,"squeeze_excitation":false,"geometric_head":true})");
  EXPECT_EQ(old.inputs, "planes");
  EXPECT_EQ(old.input_planes(), 7);
  c.inputs = "pictures";
  EXPECT_THROW(c.resolved(), Error);
}

TEST(Models, ATinyNetOverfitsASmallBatch) {
  torch::manual_seed(1);
  const Batch b = batch_of_all(first_rows(64));
  auto net = make_model(config("resnet", 0, 2, 16));
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    auto loss = torch::binary_cross_entropy_with_logits(net->forward(b.planes), b.targets);
    adam.zero_grad();
    loss.backward();
    adam.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, first / 20) << first << " -> " << last;
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

// Every row of the dataset (rows in check `check_weight` times), as row_keys.
std::multiset<std::string> all_row_keys(int check_weight) {
  const CompactPositions rows = first_rows(/*max_rows=*/0);  // 0: all
  std::multiset<std::string> keys;
  for (uint32_t r = 0; r < rows.size(); ++r)
    for (int c = 0; c < (rows.in_check[r] ? check_weight : 1); ++c)
      keys.insert(row_keys(make_batch(rows, &r, 1, false))[0]);
  return keys;
}

StreamOptions tiny_stream(int check_weight, BatchSlice slice = {}) {
  StreamOptions o;
  o.paths = {tiny_dataset()};
  o.batch_size = 1;
  o.seed = 9;
  o.check_weight = check_weight;
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

TEST(Stream, AnEpochPassesEveryRowOnceInAShuffledOrder) {
  for (int check_weight : {1, 3}) {
    StreamBatches stream(tiny_stream(check_weight));
    const auto expected = all_row_keys(check_weight);
    ASSERT_EQ(stream.rows_per_epoch(), expected.size());
    const auto first = stream_epoch(stream, 0), second = stream_epoch(stream, 1);
    EXPECT_EQ(std::multiset<std::string>(first.begin(), first.end()), expected) << "check weight " << check_weight;
    EXPECT_EQ(std::multiset<std::string>(second.begin(), second.end()), expected);
    EXPECT_NE(first, second) << "two epochs in the same order";
    EXPECT_NE(first, std::vector<std::string>(expected.begin(), expected.end())) << "not shuffled";
    StreamBatches again(tiny_stream(check_weight));
    EXPECT_EQ(stream_epoch(again, 0), first) << "not reproducible";
  }
}

TEST(Stream, RanksReadDisjointPartsThatMakeTheWhole) {
  StreamBatches rank0(tiny_stream(1, {0, 2})), rank1(tiny_stream(1, {1, 2}));
  const auto a = stream_epoch(rank0, 0), b = stream_epoch(rank1, 0);
  std::multiset<std::string> both(a.begin(), a.end());
  both.insert(b.begin(), b.end());
  EXPECT_EQ(both, all_row_keys(1));
  EXPECT_GT(a.size(), 0u);
  EXPECT_GT(b.size(), 0u);
}

TEST(Stream, AStreamStartedMidwayContinuesAsTheUninterruptedOne) {
  StreamOptions o = tiny_stream(2);
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
    straight.data_mode = mode;
    run_train(straight);
    TrainOptions first = tiny_run(dir + "/resumed");
    first.data_mode = mode;
    first.stop_at_step = 11;
    run_train(first);
    EXPECT_FALSE(std::filesystem::exists(dir + "/resumed/model.pt"));
    TrainOptions second = tiny_run(dir + "/resumed");
    second.data_mode = mode;
    second.resume = true;
    run_train(second);
    const auto a = weights(dir + "/straight/model.pt"), b = weights(dir + "/resumed/model.pt");
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
  // An MLP: batch-norm statistics would differ between a batch of 32 and two of 16.
  TrainOptions one = tiny_run(dir + "/one");
  one.model = config("mlp", 48, 0, 0);
  one.batch_size = 32;
  one.max_steps = 15;
  run_train(one);

  const std::string train = test::bin_dir() + "/train";
  const std::string options = fmt::format(
      "--data {} --out {}/two --model mlp --hidden 48 --inputs planes --batch-size 16 --max-steps 15 --epochs 100 "
      "--eval-every 8 "
      "--checkpoint-every 5 --val-fraction 0.2 --threads 1 --quiet",
      tiny_dataset(), dir);
  const std::string env =
      fmt::format("OMP_WAIT_POLICY=PASSIVE WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT={}", free_port());
  test::run_command(fmt::format(
      "{0} RANK=1 {1} {2} & rank1=$!; {0} RANK=0 {1} {2}; rank0=$?; wait $rank1 && exit $rank0", env, train, options));
  const auto a = weights(dir + "/one/model.pt"), b = weights(dir + "/two/model.pt");
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
  o.optimizer = "sgd";
  o.lr = 1e30;
  o.clip = 0;
  o.warmup = 0;
  try {
    run_train(o);
    ADD_FAILURE() << "trained";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the loss became"), std::string::npos) << e.what();
  }
}

TEST(ModelFile, PythonLoadsTheWeightsIntoAnEquivalentModule) {
  const std::string dir = test::temp_dir("python");
  torch::manual_seed(3);
  ModelConfig se = config("resnet", 0, 2, 8);
  se.squeeze_excitation = true;
  ModelConfig attacks = config("resnet", 0, 1, 8);
  attacks.inputs = "attacks";
  ModelConfig mlp_attacks = config("mlp", 16, 0, 0);
  mlp_attacks.inputs = "attacks";
  for (const auto& c : {config("mlp", 16, 0, 0), config("conv", 16, 2, 4), se, attacks, mlp_attacks}) {
    // Random planes for the 7-plane models; real positions for "attacks", whose extra planes
    // Python derives again from the first 7.
    torch::Tensor planes = torch::randn({4, c.input_planes(), 8, 8});
    if (c.inputs == "attacks") planes = batch_of_all(first_rows(400), c.input_planes()).planes;
    auto net = make_model(c);
    net->eval();
    // Non-trivial batch-norm statistics, so that loading them is checked too.
    for (auto& b : net->named_buffers())
      if (b.key().find("running") != std::string::npos) b.value().uniform_(0.5, 1.5);
    const auto logits = net->forward(planes).contiguous();
    const std::string model_path = dir + "/" + c.kind + "-" + c.inputs + ".pt";
    save_model(model_path, c, *net, "{}");
    std::ofstream(dir + "/planes.f32", std::ios::binary)
        .write(static_cast<const char*>(planes.data_ptr()), std::streamsize(planes.numel() * 4));
    std::ofstream(dir + "/logits.f32", std::ios::binary)
        .write(static_cast<const char*>(logits.data_ptr()), std::streamsize(logits.numel() * 4));
    const std::string out =
        test::run_command(test::python_path() + " " + LEGALNET_TEST_SOURCE_DIR + "/nn/load_in_python.py " + model_path +
                          " " + dir + "/planes.f32 " + dir + "/logits.f32");
    EXPECT_EQ(out.rfind("ok: " + c.kind, 0), 0u) << out;
    // And back in C++: the file alone rebuilds the network.
    const LoadedModel loaded = load_model(model_path, torch::kCPU);
    EXPECT_EQ(loaded.config.to_json(), c.to_json());
    loaded.net->eval();
    EXPECT_TRUE(torch::allclose(loaded.net->forward(planes), logits));
  }
  std::ofstream(dir + "/junk.pt") << "junk";
  EXPECT_THROW(load_model(dir + "/junk.pt", torch::kCPU), Error);
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
  save_model(dir + "/constant.pt", c, *net, "{}");

  EvaluateOptions o = tiny_evaluation(dir + "/constant.pt", dir, 200);
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
  o.data = {dir + "/missing.h5"};
  EXPECT_THROW(run_evaluate(o), Error);
}

// evaluate builds a model's inputs from positions (Position -> planes -> attack planes), train
// from compact rows: the two must give the same numbers.
TEST(Evaluate, AttackInputsFromPositionsMatchThoseOfTrainingRows) {
  const std::string dir = test::temp_dir("attacks");
  ModelConfig c = config("resnet", 0, 1, 8);
  c.inputs = "attacks";
  torch::manual_seed(4);
  auto net = make_model(c);
  save_model(dir + "/attacks.pt", c, *net, "{}");
  const EvaluateOptions o = tiny_evaluation(dir + "/attacks.pt", dir, 300);
  testing::internal::CaptureStdout();
  run_evaluate(o);
  testing::internal::GetCapturedStdout();
  const double from_positions = nlohmann::json::parse(test::read_file(o.report))["dataset"]["bce"].get<double>();

  const CompactPositions rows = first_rows(300);
  const LoadedModel loaded = load_model(o.model, torch::kCPU);
  const Evaluation from_rows = evaluate_loss(*loaded.net, rows, 64, torch::kCPU, c.input_planes());
  EXPECT_NEAR(from_positions, from_rows.loss, 1e-7 * from_rows.loss);
  // The attack planes are there and not empty.
  const Batch b = batch_of_all(rows, c.input_planes());
  ASSERT_EQ(b.planes.size(1), 10);
  EXPECT_GT(b.planes.narrow(1, encode::PLANES, 3).sum().item<double>(), double(rows.size()));
}

}  // namespace
}  // namespace legalnet::nn
