// run/train: the train tool's run (run_train), its option table and its report.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "compute/arithmetic.h"
#include "data/dataset_reader.h"
#include "kernels/board_wgrad_bf16.h"
#include "kernels/tile_gemm.h"
#include "nn/model_file.h"
#include "nn/safetensors.h"
#include "run/train/run_train.h"
#include "run/train/schedule.h"
#include "run/train/time_budget.h"
#include "support/helpers.h"
#include "train/batches.h"
#include "train/fixtures.h"
#include "train/run_folder.h"
#include "train/tensorboard.h"
#include "util/choices.h"
#include "util/error.h"
#include "util/option_cli.h"

namespace legalnet::run {
namespace {

using nn::Precision;
using test::config;
using test::tiny_dataset;
using train::RunFolder;
namespace tensorboard = train::tensorboard;

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
  auto m = nn::load_model(path, torch::kCPU);
  std::vector<torch::Tensor> w;
  for (const auto& p : m.net->parameters()) w.push_back(p.detach().clone());
  for (const auto& b : m.net->buffers()) w.push_back(b.detach().clone());
  return w;
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

// A run of `options("straight")`, one with `off` applied ("plain") and one stopped at step 11 and
// resumed ("resumed"), all in one folder: the resumed run ends with the straight run's weights
// exactly, and `what` (what `off` turns off) changed them.
void expect_exact_resume_that_matters(const std::function<TrainOptions(const std::string&)>& options,
                                      const std::function<void(TrainOptions&)>& off, const std::string& what) {
  const TrainOptions straight = options("straight");
  run_train(straight);
  TrainOptions plain = options("plain");
  off(plain);
  run_train(plain);
  TrainOptions first = options("resumed");
  first.stop_at_step = 11;
  run_train(first);
  TrainOptions second = options("resumed");
  second.resume = true;
  run_train(second);
  const std::string dir = std::filesystem::path(straight.out).parent_path().string();
  const auto a = weights(dir + "/straight/model.safetensors"), b = weights(dir + "/resumed/model.safetensors");
  const auto c = weights(dir + "/plain/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
    differs |= !torch::equal(a[i], c[i]);
  }
  EXPECT_TRUE(differs) << what << " changed nothing";
}

// --mine-share: a run that mines its own hard positions resumes exactly (the pool travels in the
// checkpoint, refreshed from the same net at the same steps), and mining changes what it learns.
TEST(Train, AMiningRunResumesWithTheSameWeights) {
  const std::string dir = test::temp_dir("resume-mining");
  auto mining = [&](const std::string& name) {
    TrainOptions o = tiny_run(dir + "/" + name);
    o.data_mode = DataMode::MEMORY;
    o.mine_share = 0.25;
    o.mine_every = 3;  // refreshes at 0, 3, ..., one at the resumed step 12 and one not
    o.mine_pool = 16;
    return o;
  };
  expect_exact_resume_that_matters(
      mining, [](TrainOptions& o) { o.mine_share = 0; }, "the mined rows");
  // A checkpoint whose pool is not the run's is refused in one line naming it.
  TrainOptions again = mining("resumed2");
  again.stop_at_step = 4;
  run_train(again);
  again.stop_at_step = 0;
  again.resume = true;
  again.mine_pool = 8;
  try {
    run_train(again);
    ADD_FAILURE() << "a checkpoint with 16 mined positions resumed as a pool of 8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--mine-pool"), std::string::npos) << e.what();
  }
}

// --ema: the model file holds the average of the weights, and a run that keeps one resumes
// exactly (the average travels in the checkpoint).
TEST(Train, AnAveragingRunResumesWithTheSameWeights) {
  const std::string dir = test::temp_dir("resume-ema");
  auto averaging = [&](const std::string& name) {
    TrainOptions o = tiny_run(dir + "/" + name);
    o.ema = 0.9;
    return o;
  };
  expect_exact_resume_that_matters(
      averaging, [](TrainOptions& o) { o.ema = 0; }, "the average");
  const nn::safetensors::Reader checkpoint(dir + "/resumed/checkpoint.safetensors");
  EXPECT_TRUE(checkpoint.find("average.stem.weight") != nullptr);
  // A checkpoint without an average does not resume a run that asks for one, nor one with an
  // average a run that does not.
  TrainOptions without = averaging("without");
  without.ema = 0;
  without.stop_at_step = 4;
  run_train(without);
  const nn::ModelConfig model = nn::load_model(dir + "/straight/model.safetensors", torch::kCPU).config;
  auto net = nn::make_model(model), average = nn::make_model(model);
  torch::optim::Adam adam(net->parameters());
  const auto resume = [&](const std::string& name, nn::PolicyNet* with) {
    return test::error_of([&] {
      (void)nn::load_checkpoint(dir + "/" + name + "/checkpoint.safetensors", model, *net, adam, torch::kCPU, with);
    });
  };
  EXPECT_EQ(resume("without", average.get()),
            dir + "/without/checkpoint.safetensors: checkpoint of a run without --ema, the options ask for it");
  EXPECT_EQ(resume("resumed", nullptr),
            dir + "/resumed/checkpoint.safetensors: checkpoint of a run with --ema, the options ask for none");
  EXPECT_EQ(resume("resumed", average.get()), "no error");
}

// --precision auto as train resolves it for its net (nn::resolve_precision): a resnet on the board
// kernels in fp32 wherever they run short of AMX; an MLP, or --kernels torch, as the CPU's bf16 says.
TEST(Train, AutoPrecisionTrainsAResnetOnTheBoardKernelsInFp32) {
  const std::string dir = test::temp_dir("auto-precision");
  auto recorded = [](const std::string& run) {
    std::ifstream in(run + "/options.json");
    return nlohmann::json::parse(in).at("compute_precision").get<std::string>();
  };
  TrainOptions resnet = tiny_run(dir + "/resnet"), on_torch = tiny_run(dir + "/torch"), mlp = tiny_run(dir + "/mlp");
  on_torch.kernels = nn::Kernels::TORCH;
  mlp.model = config("mlp", 48, 0, 0);
  for (TrainOptions* o : {&resnet, &on_torch, &mlp}) {
    ASSERT_EQ(o->compute_precision, Precision::AUTO);
    o->max_steps = 2;
    run_train(*o);
  }
  const std::string native = nn::cpu_has_native_bf16() ? "bf16" : "fp32";
  const bool board = nn::board_isa() >= nn::BoardIsa::AVX2 && !nn::cpu_has_amx_bf16();
  EXPECT_EQ(recorded(dir + "/resnet"), board ? "fp32" : native);
  EXPECT_EQ(recorded(dir + "/torch"), native);
  EXPECT_EQ(recorded(dir + "/mlp"), native);
  // options.json's kernels: what ran; an MLP has no convolution for the board kernels to run.
  std::ifstream in(dir + "/mlp/options.json");
  EXPECT_EQ(nlohmann::json::parse(in).at("kernels"), "torch");
}

// Each dataset is opened once before step 1, in memory and in stream mode alike, with and without
// --val: its identity in options.json, the data plan and the loaders read the same readers.
TEST(Train, OpensEachDatasetOnce) {
  const std::string dir = test::temp_dir("opens");
  for (const DataMode mode : {DataMode::MEMORY, DataMode::STREAM})
    for (const bool val : {false, true}) {
      TrainOptions o = tiny_run(dir + "/" + choice_of(DATA_MODES, mode).name + (val ? "-val" : ""));
      o.data_mode = mode;
      if (val) o.val = {tiny_dataset()};
      o.max_steps = 2;
      const uint64_t before = data::DatasetReader::opened();
      run_train(o);
      EXPECT_EQ(data::DatasetReader::opened() - before, o.data.size() + o.val.size())
          << choice_of(DATA_MODES, mode).name << (val ? " with --val" : "");
    }
}

// --time-budget fixes the step count from a measured rate, records it as max_steps (and any
// re-plan its pace made as replan), and those --max-steps and --replan give the very same run:
// the measure draws nothing the run draws.
TEST(Train, ATimeBudgetRecordsItsStepsAndThoseStepsRerunTheRun) {
  const std::string dir = test::temp_dir("time-budget");
  TrainOptions budget = tiny_run(dir + "/budget");
  budget.max_steps = 0;
  budget.epochs = 1;
  budget.time_budget = 0.002;  // 0.1 s: fewer steps than an epoch
  const TrainReport r = run_train(budget);
  std::ifstream in(dir + "/budget/options.json");
  const nlohmann::json options = nlohmann::json::parse(in);
  const int64_t steps = options.at("max_steps").get<int64_t>();
  EXPECT_GE(steps, 1);
  const std::string replan = options.at("replan").get<std::string>();
  EXPECT_EQ(options.at("total_steps").get<int64_t>(), r.steps);
  EXPECT_EQ(r.steps, replan.empty() ? steps : parse_replans(replan).back().steps);
  TrainOptions again = tiny_run(dir + "/again");
  again.epochs = 1;
  again.max_steps = steps;
  again.replan = replan;
  EXPECT_EQ(run_train(again).steps, r.steps);
  const auto a = weights(dir + "/budget/model.safetensors"), b = weights(dir + "/again/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
  // The rate left out follows the steps the budget fixed, as it would follow that --max-steps.
  EXPECT_DOUBLE_EQ(options.at("lr").get<double>(), default_lr(nn::ModelKind::RESNET, steps, budget.batch_size));
  // With --max-steps the budget only shortens the run: 3 steps fit a minute.
  TrainOptions both = tiny_run(dir + "/both");
  both.time_budget = 1;
  both.max_steps = 3;
  EXPECT_EQ(run_train(both).steps, 3);
  std::ifstream both_in(dir + "/both/options.json");
  EXPECT_EQ(nlohmann::json::parse(both_in).at("max_steps").get<int64_t>(), 3);
}

// A budgeted run whose steps go much slower than its probe's (after each step, a validation pass
// over the whole dataset: some 60 batches' forward passes) moves its end while it runs, says so,
// and records where in options.json, which reruns it.
TEST(Train, ABudgetedRunSlowerThanItsProbeMovesItsEnd) {
  const std::string dir = test::temp_dir("time-budget-pace");
  TrainOptions budget = tiny_run(dir + "/budget");
  budget.max_steps = 0;
  budget.epochs = 100;
  budget.val = {tiny_dataset()};
  budget.eval_every = 1;
  budget.time_budget = 0.005;  // 0.3 s
  budget.quiet = false;
  testing::internal::CaptureStderr();
  const TrainReport r = run_train(budget);
  const std::string said = testing::internal::GetCapturedStderr();
  std::ifstream in(dir + "/budget/options.json");
  const nlohmann::json options = nlohmann::json::parse(in);
  const std::vector<Replan> replans = parse_replans(options.at("replan").get<std::string>());
  ASSERT_FALSE(replans.empty()) << said;
  const int64_t first = options.at("max_steps").get<int64_t>();
  EXPECT_LT(replans.front().steps, first) << said;
  EXPECT_EQ(r.steps, replans.back().steps);
  EXPECT_NE(said.find(fmt::format("the run now ends at step {}, not {}\n", replans.front().steps, first)),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(fmt::format("train: rerun with --max-steps {} --replan {} for the same run\n", first,
                                  options.at("replan").get<std::string>())),
            std::string::npos)
      << said;
  TrainOptions again = tiny_run(dir + "/again");
  again.epochs = 100;
  again.val = {tiny_dataset()};
  again.eval_every = 1;
  again.max_steps = first;
  again.replan = options.at("replan").get<std::string>();
  EXPECT_EQ(run_train(again).steps, r.steps);
  const auto a = weights(dir + "/budget/model.safetensors"), b = weights(dir + "/again/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
}

// --replan moves the run's end as a budget's pace check would: the run ends at the last re-plan's
// step, options.json records the re-plans and the steps, and a re-plan that cannot be run is
// refused before the run starts, naming it.
TEST(Train, AReplanMovesTheRunsEndAndOptionsJsonRecordsIt) {
  const std::string dir = test::temp_dir("replan");
  TrainOptions o = tiny_run(dir + "/moved");
  o.max_steps = 12;
  o.replan = "4:9,6:7";
  EXPECT_EQ(run_train(o).steps, 7);
  std::ifstream in(dir + "/moved/options.json");
  const nlohmann::json options = nlohmann::json::parse(in);
  EXPECT_EQ(options.at("max_steps").get<int64_t>(), 12);
  EXPECT_EQ(options.at("replan").get<std::string>(), "4:9,6:7");
  EXPECT_EQ(options.at("total_steps").get<int64_t>(), 7);
  auto refused = [&](TrainOptions bad, const std::string& message) {
    bad.out = dir + "/refused";
    try {
      run_train(bad);
      ADD_FAILURE() << bad.replan << " ran";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
    EXPECT_FALSE(std::filesystem::exists(dir + "/refused/options.json"));
  };
  o.replan = "12:20";
  refused(o, "--replan 12:20: the run ends at step 12 before it");
  o.replan = "4:x";
  refused(o, "--replan '4:x': '4:x' is not AT:STEPS (two counts, as options.json's replan has them)");
  o.replan = "4:9";
  o.time_budget = 1;
  refused(o,
          "--replan with --time-budget: the budget makes its own re-plans (give --max-steps and --replan alone to "
          "rerun a budgeted run)");
}

// A budget's overrun is said with the run's rate and the probe's; a run within its budget, or
// without one, says nothing.
TEST(Train, ABudgetOverrunIsSaidWithTheRunsRateAndTheProbes) {
  TrainOptions o;
  o.batch_size = 256;
  o.time_budget = 20;
  testing::internal::CaptureStderr();
  say_budget_overrun(o, {13582, 3409}, 13582, 1150);  // within the 20 minutes
  o.time_budget = 0;
  say_budget_overrun(o, {13582, 3409}, 13582, 1539.2);  // no budget
  o.time_budget = 20;
  say_budget_overrun(o, {13582, 3409}, 13582, 1539.2);  // make all's run on the Cascade Lake
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "train: --time-budget 20 min overrun: 13582 steps took 25.7 min at 2259 samples/s a process, where the "
            "probe measured 3409 before the run (the machine slowed after it, or other work shared its cores)\n");
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
  // A one-layer attention net diverges at SGD's largest rate (--lr's range ends at 100).
  o.model = config("attention", 0, 1, 8);
  o.model.inputs = encode::InputKind::STATE;
  o.optimizer = Optimizer::SGD;
  o.lr = 100;
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

// The names of train's choice tables read back as their values; every architecture has its
// default learning rate.
TEST(TrainTable, ChoicesRoundTripAndEveryArchitectureHasItsRate) {
  for (const auto& row : OPTIMIZERS) EXPECT_EQ(find_choice(OPTIMIZERS, row.name, "optimizer").value, row.value);
  for (const auto& row : DATA_MODES) EXPECT_EQ(find_choice(DATA_MODES, row.name, "data mode").value, row.value);
  EXPECT_EQ(test::error_of([] { find_choice(OPTIMIZERS, "nonesuch\x1b", "optimizer"); }),
            "unknown optimizer 'nonesuch\\x1b' (expected adam | adamw | sgd)");
  EXPECT_EQ(test::error_of([] { find_choice(DATA_MODES, "nonesuch", "data mode"); }),
            "unknown data mode 'nonesuch' (expected auto | memory | stream)");
  for (const nn::ModelSpec& spec : nn::MODEL_SPECS) {
    const nn::ModelSpec& defaults = spec;
    EXPECT_GT(defaults.lr, 0) << spec.name;
    EXPECT_EQ(default_lr(spec.value, 0, LR_BATCH), defaults.lr) << spec.name;  // the epochs decide: the base rate
    EXPECT_EQ(default_lr(spec.value, 1000000, LR_BATCH), defaults.lr) << spec.name;
    nn::ModelConfig c;  // each kind's default head is one its nets have
    c.kind = spec.value;
    c.policy_head = defaults.policy_head;
    EXPECT_NO_THROW(c.resolved()) << spec.name;
  }
}

// --hidden's, --blocks', --channels' and --heads' help is read from nn::MODEL_SPECS: a new kind's
// sizes show there with no edit of the table (tests/testdata/interface.txt holds the texts).
TEST(TrainTable, SizeHelpIsEachKindsMeaningAndDefault) {
  EXPECT_EQ(nn::size_help(&nn::SizeMeanings::blocks, &nn::ModelSizes::blocks),
            "conv/resnet: blocks (8 / 6); attention: layers (6)");
  EXPECT_EQ(nn::size_help(&nn::SizeMeanings::hidden, &nn::ModelSizes::hidden),
            "mlp: hidden width (4096); conv: FC width (1024); attention: feed-forward width (2 x channels)");
  EXPECT_EQ(nn::size_help(&nn::SizeMeanings::heads, &nn::ModelSizes::heads), "attention: heads per layer (4)");
}

// A resnet's schedule shorter than the one its rate was measured for takes a higher rate, rising
// with the shortening up to a cap; the untuned kinds keep theirs at any length.
TEST(TrainTable, ShortSchedulesTakeHigherRates) {
  const double base = nn::model_spec(nn::ModelKind::RESNET).lr;
  auto resnet = [](int64_t steps, int64_t batch) { return default_lr(nn::ModelKind::RESNET, steps, batch); };
  EXPECT_EQ(resnet(25000, 256), base);
  EXPECT_NEAR(resnet(10607, 256), base * std::pow(25000 / 10607.0, SHORT_SCHEDULE_POWER), 1e-12);
  // The measured points: about 3e-2 at 10,607 steps of 256, the cap at 8,835.
  EXPECT_GT(resnet(10607, 256), 2.9 * base);
  EXPECT_LT(resnet(10607, 256), 3.1 * base);
  EXPECT_EQ(resnet(8835, 256), base * SHORT_SCHEDULE_MAX);
  EXPECT_GT(resnet(12000, 256), resnet(18000, 256));
  EXPECT_EQ(resnet(24, 256), base * SHORT_SCHEDULE_MAX);
  // Another batch: the schedule counted in the rows it reads, the rate times sqrt(batch / 256).
  // 17,670 steps of 128 read what 8,835 of 256 do: 2.26e-2, the measured point.
  EXPECT_NEAR(resnet(17670, 128), base * SHORT_SCHEDULE_MAX * std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(resnet(17670, 128), 2.26e-2, 1e-4);
  EXPECT_NEAR(resnet(21214, 128), resnet(10607, 256) * std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(resnet(50000, 128), base * std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(resnet(0, 512), base * std::sqrt(2.0), 1e-12);
  EXPECT_EQ(default_lr(nn::ModelKind::MLP, 24, 128), nn::model_spec(nn::ModelKind::MLP).lr);
  // Ray scans take a share of the resnet's rate at every length; line mixing the whole.
  for (const int64_t steps : {0, 8835, 17670, 50000}) {
    EXPECT_DOUBLE_EQ(default_lr(nn::ModelKind::RESNET, steps, 128, nn::Mixing::RAYS),
                     nn::RAYS_LR_SHARE * resnet(steps, 128));
    EXPECT_EQ(default_lr(nn::ModelKind::RESNET, steps, 128, nn::Mixing::LINES), resnet(steps, 128));
  }
}

// --resume keeps what it kept before the table: the net's options inside options.json's
// "model", the schedule, the data's order and the number of processes, named as the
// messages name them (tests/tools/hostile.sh checks the messages end to end).
TEST(TrainTable, ResumeKeepsTheOptionsThatDecideWhatTheRunLearns) {
  std::vector<std::string> kept;
  for (const train::KeptOption& k : kept_on_resume()) kept.push_back(k.pointer + " " + k.option);
  const std::vector<std::string> expected = {"/val_fraction --val-fraction",
                                             "/val_max --val-max",
                                             "/model/kind --arch",
                                             "/model/hidden --hidden",
                                             "/model/blocks --blocks",
                                             "/model/channels --channels",
                                             "/model/heads --heads",
                                             "/model/squeeze_excitation --se",
                                             "/model/mixing --mixing",
                                             "/model/policy_head --policy-head",
                                             "/model/paths --paths",
                                             "/model/vetoes --vetoes",
                                             "/model/input_skip --input-skip",
                                             "/model/input_kind --inputs",
                                             "/model/geometric_head --full-head",
                                             "/batch_size --batch-size",
                                             "/lr --lr",
                                             "/lr_rule the learning rate's rule (--lr left out, or given)",
                                             "/optimizer --optimizer",
                                             "/weight_decay --weight-decay",
                                             "/warmup --warmup",
                                             "/min_lr_ratio --min-lr-ratio",
                                             "/clip --clip",
                                             "/ema --ema",
                                             "/position_ply_limit --position-ply-limit",
                                             "/check_weight --check-weight",
                                             "/rare_weight --rare-weight",
                                             "/pin_weight --pin-weight",
                                             "/situation_weight --situation-weight",
                                             "/rules_weight --rules-weight",
                                             "/model/rule_lines --rule-lines",
                                             "/logit_margin --logit-margin",
                                             "/mine_share --mine-share",
                                             "/mine_every --mine-every",
                                             "/mine_pool --mine-pool",
                                             "/data_mode --data-mode",
                                             "/shuffle_buffer --shuffle-buffer",
                                             "/processes the number of processes (WORLD_SIZE)",
                                             "/seed --seed"};
  EXPECT_EQ(kept, expected);
  const auto data = kept_data();
  ASSERT_EQ(data.size(), 2u);
  EXPECT_EQ(data[0].files_key, "data_files");
  EXPECT_EQ(data[1].option, "--val");
}

// check_train_options() for a struct filled without the parser: the table's ranges, and the options a
// run cannot go without, each one line naming the option.
// The model's config writes rules_head, rule_lines, paths and vetoes only when true: a run without one is
// resumed with it, or a run with one without it, as a difference the message names (not as an
// options.json that lacks a key).
TEST(TrainTable, ResumeComparesTheModelsFlagsAFileWritesOnlyWhenTrue) {
  const std::string dir = test::temp_dir("resume-flags") + "/run";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/checkpoint.safetensors") << "";
  const std::vector<train::KeptOption> kept = {{"/model/kind", "--arch"}, {"/model/vetoes", "--vetoes"}};
  auto resumed = [&](const std::string& run, const std::string& now) {
    std::ofstream(dir + "/options.json") << run;
    const RunFolder folder(dir, /*resume=*/true, /*force=*/false, {});
    return test::error_of([&] { folder.check_resumed_options(now, kept, {}); });
  };
  const std::string without = R"({"model": {"kind": "resnet"}})";
  const std::string with = R"({"model": {"kind": "resnet", "vetoes": true}})";
  EXPECT_EQ(resumed(without, without), "no error");
  EXPECT_EQ(resumed(with, with), "no error");
  EXPECT_EQ(resumed(without, with), "--resume: --vetoes is true here but false in the run being resumed ('" + dir +
                                        "/options.json'); resume with the run's value, or start a new run");
  EXPECT_EQ(resumed(with, without), "--resume: --vetoes is false here but true in the run being resumed ('" + dir +
                                        "/options.json'); resume with the run's value, or start a new run");
  // Any other key the run lacks is still refused.
  EXPECT_NE(resumed(R"({"model": {}})", without).find("has no 'model' key 'kind'"), std::string::npos);
}

TEST(TrainTable, ValidateNamesTheOptionOutOfItsRange) {
  TrainOptions o = tiny_run("/nonexistent/run");
  EXPECT_NO_THROW(check_train_options(o));
  o.batch_size = 0;
  EXPECT_EQ(test::error_of([&] { check_train_options(o); }), "--batch-size 0 is not in 1..1.04858e+06");
  o = tiny_run("/nonexistent/run");
  o.lr = std::nan("");
  EXPECT_EQ(test::error_of([&] { check_train_options(o); }), "--lr nan is not in 0..100");
  // The rules head is a resnet's: asked of another architecture, the net train would build is refused
  // (run_train builds it before any work).
  o = tiny_run("/nonexistent/run");
  o.model.kind = nn::ModelKind::RESNET;
  EXPECT_TRUE(trained_model(o.model, 1).rules_head);
  EXPECT_FALSE(trained_model(o.model, 0).rules_head);
  o.model.kind = nn::ModelKind::ATTENTION;
  EXPECT_EQ(test::error_of([&] { trained_model(o.model, 1); }),
            "the rules head (train --rules-weight) is a resnet option, not attention's");
  o = tiny_run("");
  EXPECT_EQ(test::error_of([&] { check_train_options(o); }), "no run folder: give --out runs/NAME");
  o.data.clear();
  EXPECT_EQ(test::error_of([&] { check_train_options(o); }), "no training data: give --data FILE.h5");
}

// train's options as its command line sets them ("--data d.h5 --out run" added), through the table.
TrainOptions parsed(const std::string& args) {
  CLI::App app;
  TrainOptions o;
  train_options().add_to(app, o);
  app.parse("--data d.h5 --out run " + args, false);
  return o;
}

// --situation-weight many_queens=5 repeats the rows with three or more queens five times an
// epoch, whatever else they are, and every other row once.
TEST(TrainRowWeights, ASituationWeightRepeatsExactlyItsRows) {
  using namespace chess;
  train::CompactPositions rows;
  constexpr uint16_t QUEENS = 1 << SIT_MANY_QUEENS, LEGAL = 1 << WITH_LEGAL_MOVE;
  rows.situations = {LEGAL,
                     LEGAL | QUEENS,
                     LEGAL | 1 << SIT_IN_CHECK,
                     QUEENS | 1 << SIT_NO_LEGAL_MOVE,
                     LEGAL | 1 << SIT_PROMOTION,
                     LEGAL | QUEENS | 1 << SIT_PINNED_PIECE | 1 << SIT_CASTLING};
  rows.side.assign(rows.situations.size(), 1);  // size() counts the rows by their side to move
  const train::RowWeights w = row_weights(parsed("--situation-weight many_queens=5"));
  std::vector<int> seen(rows.situations.size());
  for (uint32_t r : train::epoch_order(rows, 3, 0, w)) ++seen[r];
  EXPECT_EQ(seen, (std::vector<int>{1, 5, 1, 5, 1, 5}));
  EXPECT_EQ(train::epoch_steps(rows, 2, w), 9);
  EXPECT_EQ(w, train::RowWeights{}.raise(SIT_MANY_QUEENS, 5));
}

// A bad --situation-weight is refused in one line, by the parser and by check_train_options
// (a struct filled without the parser); an unknown name with the names there are.
TEST(TrainRowWeights, ABadNameOrWeightIsRefusedInOneLine) {
  const std::string names =
      "(expected with_legal_move | in_check | double_check | pinned_piece | en_passant | castling | "
      "castling_refused | promotion | many_queens | few_moves | no_legal_move)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"queens=4", "--situation-weight: unknown situation 'queens' " + names},
      {"many_queens=0", "--situation-weight: many_queens: the weight '0' is not an integer in 1..100"},
      {"many_queens=200", "--situation-weight: many_queens: the weight '200' is not an integer in 1..100"},
      {"many_queens=x", "--situation-weight: many_queens: the weight 'x' is not an integer in 1..100"},
      {"many_queens=2,many_queens=3", "--situation-weight: many_queens is named twice"},
  };
  for (const auto& [text, message] : cases) {
    try {
      parsed("--situation-weight " + text);
      ADD_FAILURE() << text << " parsed";
    } catch (const CLI::ValidationError& e) {
      EXPECT_EQ(std::string(e.what()), message) << text;
    }
    TrainOptions o = tiny_run("/nonexistent/run");
    o.situation_weight = text;
    EXPECT_EQ(test::error_of([&] { check_train_options(o); }), message);
  }
  TrainOptions o = tiny_run("/nonexistent/run");
  o.situation_weight = "in_check";
  const std::string what = test::error_of([&] { check_train_options(o); });
  EXPECT_EQ(what.find("--situation-weight: 'in_check' is not NAME=W (e.g. many_queens=4; the names: with_legal_move"),
            0u)
      << what;
  EXPECT_EQ(what.find('\n'), std::string::npos);
}

// The older options name situations' weights: --check-weight 8 is --situation-weight in_check=8,
// --rare-weight castling and en_passant, --pin-weight pinned_piece; where both weight one
// situation, the larger weight wins.
TEST(TrainRowWeights, TheOlderOptionsAreSituationWeights) {
  EXPECT_EQ(row_weights(parsed("--check-weight 8")), row_weights(parsed("--situation-weight in_check=8")));
  EXPECT_EQ(row_weights(parsed("--check-weight 8 --rare-weight 4 --pin-weight 3")),
            row_weights(parsed("--situation-weight in_check=8,castling=4,en_passant=4,pinned_piece=3")));
  EXPECT_EQ(row_weights(parsed("--check-weight 8")), test::weights_of(8));
  EXPECT_EQ(row_weights(parsed("--check-weight 8 --situation-weight in_check=3")), test::weights_of(8));
  EXPECT_EQ(row_weights(parsed("--check-weight 2 --situation-weight in_check=8")), test::weights_of(8));
  EXPECT_EQ(row_weights(parsed("")), train::RowWeights{});
  EXPECT_FALSE(row_weights(parsed("")).repeats_any());
}

}  // namespace
}  // namespace legalnet::run
