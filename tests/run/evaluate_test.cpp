// The evaluate tool's run (lib/run/evaluate/): its figures against hand-computed values, its
// inputs against train's, its option table and its report.
#include "run/evaluate/evaluate.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "chess/movegen.h"
#include "chess/position.h"
#include "compute/arithmetic.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "encode/inputs.h"
#include "kernels/kernels.h"
#include "nn/model_file.h"
#include "nn/models.h"
#include "support/helpers.h"
#include "train/fixtures.h"
#include "train/metrics.h"
#include "train/training_data.h"
#include "util/option_cli.h"

namespace legalnet::run {
namespace {

using nn::ModelConfig;
using nn::Precision;

using test::config;
using test::tiny_dataset;  // the tiny dataset the torch suites share (6 games of seed 21)

// Options to evaluate `model` on the tiny dataset's first `positions` rows, writing dir/report.json.
EvaluateOptions tiny_evaluation(const std::string& model, const std::string& dir, uint64_t positions) {
  EvaluateOptions o;
  o.model = model;
  o.data = {tiny_dataset()};
  o.max_positions = positions;
  o.device = "cpu";
  o.compute_precision = Precision::FP32;  // figures computed by hand in fp32 (bf16: Precision.Bf16LogitsAreClose...)
  o.kernels = nn::Kernels::TORCH;         // the reference (Evaluate.BoardKernelsGiveTorchsFigures: the board's)
  o.threads = 1;
  o.quiet = true;
  o.report = dir + "/report.json";
  return o;
}

// A model made for the test: every possibly-legal index gets probability 0.6, so every figure
// of the report can be computed by hand from the legal-move counts.
TEST(Evaluate, MetricsOfAConstantModelMatchHandComputedValues) {
  const std::string dir = test::temp_dir("evaluate");
  const ModelConfig c = config("mlp", 8, 0, 0);
  auto net = nn::make_model(c);
  const double logit = std::log(0.6 / 0.4);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : net->named_parameters()) p.value().zero_();
    for (auto& p : net->named_parameters())
      if (p.key() == "out.bias") p.value().fill_(logit);
  }
  nn::save_model(dir + "/constant.safetensors", c, *net, "{}");

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
  const std::string again = run_evaluate(o).json_text();
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(nlohmann::json::parse(again)["games"]["mean_plies_before_first_illegal"],
            report["games"]["mean_plies_before_first_illegal"]);
  // The headline first; the games' picks in and out of check add up; the table says which rows.
  const auto& g = report["games"];
  EXPECT_EQ(g["picks_in_check"].get<uint64_t>() + g["picks_not_in_check"].get<uint64_t>(),
            g["model_picks"].get<uint64_t>());
  EXPECT_EQ(g["illegal_picks_in_check"].get<uint64_t>() + g["illegal_picks_not_in_check"].get<uint64_t>(),
            g["illegal_picks"].get<uint64_t>());
  // The interval over games holds the rate; the worst game, numbered from 1, holds at most all picks.
  const double rate = g["illegal_rate_per_pick"].get<double>();
  EXPECT_LE(g["illegal_rate_95ci_over_games"][0].get<double>(), rate);
  EXPECT_GE(g["illegal_rate_95ci_over_games"][1].get<double>(), rate);
  if (g["illegal_picks"].get<uint64_t>() > 0) {
    EXPECT_GE(g["worst_game"]["game"].get<int>(), 1);
    EXPECT_LE(g["worst_game"]["game"].get<int>(), 3);
    EXPECT_GE(g["worst_game"]["illegal_picks"].get<uint64_t>(), 1u);
    EXPECT_LE(g["worst_game"]["illegal_picks"].get<uint64_t>(), g["illegal_picks"].get<uint64_t>());
    EXPECT_NE(table.find("worst game "), std::string::npos) << table;
  } else {
    EXPECT_TRUE(g["worst_game"].is_null());
  }
  EXPECT_NE(table.find("95% interval over games"), std::string::npos) << table;
  EXPECT_EQ(d["rows_in_data"].get<uint64_t>(), reader.num_positions());
  const std::string first = fmt::format("the first 200 of {} rows of {}", reader.num_positions(), o.data[0]);
  ASSERT_NE(table.find(first), std::string::npos) << table;
  EXPECT_LT(table.find("Headline"), table.find("On " + first));
  EXPECT_LT(table.find("games ending by the rules"), table.find("plies before the first illegal move"));
  // Over the whole set the rare kinds are counted in the one pass, with the second pass's figures.
  o.max_positions = 0;
  o.games = 0;
  testing::internal::CaptureStdout();
  const auto whole = nlohmann::json::parse(run_evaluate(o).json_text());
  const std::string whole_table = testing::internal::GetCapturedStdout();
  EXPECT_EQ(whole["dataset"]["positions"].get<uint64_t>(), reader.num_positions());
  EXPECT_NE(whole_table.find(fmt::format("all {} rows of {}", reader.num_positions(), o.data[0])), std::string::npos);
  EXPECT_EQ(whole["dataset"]["rare_moves_whole_set"], d["rare_moves_whole_set"]);

  o.data = {dir + "/missing.h5"};
  EXPECT_EQ(test::error_of([&] { run_evaluate(o); }), dir + "/missing.h5: cannot open: no such file or not readable");
}

// evaluate builds a model's inputs from positions (dataset row -> Position -> BoardState),
// train from compact rows (dataset row -> BoardState): for every input kind the two must be
// the same bytes, and a model must score the same (its outputs mapped back to board order in
// evaluate, its targets mapped into its frame in train).
TEST(Evaluate, InputsFromPositionsAreThoseOfTrainingRowsForEveryKind) {
  train::LoadOptions load;
  load.quiet = true;
  load.max_rows = 300;
  const train::CompactPositions rows = train::load_positions({tiny_dataset()}, load);
  const data::DatasetReader reader(tiny_dataset());
  const std::vector<chess::Position> positions = reader.read_board_positions(0, rows.size());
  for (int k = 0; k < encode::INPUT_KIND_NB; ++k) {
    const auto kind = encode::InputKind(k);
    const size_t floats = size_t(encode::input_spec(kind).planes) * encode::PLANE_SIZE;
    std::vector<float> from_row(floats), from_position(floats);
    for (size_t r = 0; r < rows.size(); ++r) {
      encode::write_inputs(kind, rows.state(r), from_row.data());
      encode::write_inputs(kind, encode::BoardState::of(positions[r]), from_position.data());
      ASSERT_EQ(from_row, from_position) << encode::input_spec(kind).name << " row " << r;
    }
  }
  for (auto kind : {encode::InputKind::ATTACKS, encode::InputKind::STATE}) {
    const std::string dir = test::temp_dir(std::string("inputs-") + encode::input_spec(kind).name);
    ModelConfig c = config("resnet", 0, 1, 8);
    c.inputs = kind;
    torch::manual_seed(4);
    auto net = nn::make_model(c);
    nn::save_model(dir + "/model.safetensors", c, *net, "{}");
    const EvaluateOptions o = tiny_evaluation(dir + "/model.safetensors", dir, rows.size());
    testing::internal::CaptureStdout();
    run_evaluate(o);
    testing::internal::GetCapturedStdout();
    const auto report = nlohmann::json::parse(test::read_file(o.report));
    const nn::LoadedModel loaded = nn::load_model(o.model, torch::kCPU);
    const train::Evaluation from_rows = train::evaluate_loss(*loaded.net, rows, 64, torch::kCPU, kind, Precision::FP32);
    EXPECT_NEAR(report["dataset"]["bce"].get<double>(), from_rows.loss, 1e-6 * from_rows.loss);
    EXPECT_EQ(report["model"]["input_kind"].get<std::string>(), encode::input_spec(kind).name);
    EXPECT_EQ(report["model"]["input_kind_from_move_generator"].get<bool>(), kind == encode::InputKind::ATTACKS);
    // The rare kinds are counted over every row of the set.
    EXPECT_EQ(report["dataset"]["rare_moves_whole_set"]["positions_scanned"].get<uint64_t>(), reader.num_positions());
  }
}

// evaluate runs a resnet's 3x3 convolutions on the board kernels where train would (--kernels
// auto on a CPU with AVX2 in fp32): the same figures as torch's convolutions, within the
// rounding of Winograd F(4x4,3x3), and report.json says which ran.
TEST(Evaluate, BoardKernelsGiveTorchsFigures) {
  if (nn::resolve_kernels(nn::Kernels::AUTO, torch::kCPU, Precision::FP32) != nn::Kernels::BOARD)
    GTEST_SKIP() << "the board kernels need AVX2 and FMA";
  const std::string dir = test::temp_dir("evaluate-kernels");
  ModelConfig c = config("resnet", 0, 2, 16);
  torch::manual_seed(5);
  auto net = nn::make_model(c);
  nn::save_model(dir + "/model.safetensors", c, *net, "{}");
  nlohmann::json reports[2];
  const nn::Kernels kernels[2] = {nn::Kernels::TORCH, nn::Kernels::AUTO};
  for (int k = 0; k < 2; ++k) {
    EvaluateOptions o = tiny_evaluation(dir + "/model.safetensors", dir, 300);
    o.kernels = kernels[k];
    o.games = 4;
    o.report = fmt::format("{}/report{}.json", dir, k);
    testing::internal::CaptureStdout();
    run_evaluate(o);
    const std::string summary = testing::internal::GetCapturedStdout();
    EXPECT_EQ(summary.find("on the board kernels") != std::string::npos, k == 1) << summary;
    reports[k] = nlohmann::json::parse(test::read_file(o.report));
  }
  EXPECT_EQ(reports[0]["options"]["kernels"], "torch");
  EXPECT_EQ(reports[1]["options"]["kernels"], "board");
  const double bce = reports[0]["dataset"]["bce"].get<double>();
  EXPECT_NEAR(reports[1]["dataset"]["bce"].get<double>(), bce, 1e-4 * bce);
  // An untrained net's outputs sit near the threshold: a rounding may flip a few of its ~10^4.
  for (const char* figure : {"precision", "recall", "exact_set_accuracy"})
    EXPECT_NEAR(reports[1]["dataset"][figure].get<double>(), reports[0]["dataset"][figure].get<double>(), 1e-2)
        << figure;
  EXPECT_EQ(reports[1]["games"]["games"], 4);
}

// A position set's card is scored on every thread and summed in order: the same report for one
// thread and for three, with batches that do not divide among them.
TEST(Evaluate, APositionSetsCardIsTheSameForAnyThreadCount) {
  const std::string dir = test::temp_dir("evaluate-position-set-threads");
  ModelConfig c = config("resnet", 0, 2, 16);
  torch::manual_seed(6);
  auto net = nn::make_model(c);
  nn::save_model(dir + "/model.safetensors", c, *net, "{}");
  std::string fens;
  chess::Position pos;
  for (int ply = 0; ply < 47; ++ply) {
    fens += pos.fen() + "\n";
    const chess::MoveList legal(pos);
    if (legal.size() == 0) break;
    pos.do_move(legal[size_t(ply * 7) % legal.size()]);
  }
  std::ofstream(dir + "/positions.fen") << fens;
  nlohmann::json sets[2];
  for (int k = 0; k < 2; ++k) {
    EvaluateOptions o = tiny_evaluation(dir + "/model.safetensors", dir, 10);
    o.kernels = nn::Kernels::AUTO;
    o.positions = {dir + "/positions.fen"};
    o.batch_size = 10;
    o.threads = k == 0 ? 1 : 3;
    o.report = fmt::format("{}/report{}.json", dir, k);
    testing::internal::CaptureStdout();
    run_evaluate(o);
    testing::internal::GetCapturedStdout();
    sets[k] = nlohmann::json::parse(test::read_file(o.report))["position_sets"];
  }
  ASSERT_EQ(sets[0].size(), 1u);
  EXPECT_EQ(sets[0][0]["situations"]["with a legal move"]["positions"], 47);
  EXPECT_EQ(sets[0].dump(), sets[1].dump());
}

// The one table: --opponent is a choice (its JSON value the name), report.json's "options" keeps
// its keys and order, and validate() refuses what the parser would.
TEST(EvaluateOptions, TheTableParsesRecordsAndValidates) {
  EvaluateOptions o;
  CLI::App app{"evaluate"};
  evaluate_options().add_to(app, o);
  app.parse(std::vector<std::string>{"7", "--max-plies", "self", "--opponent", "m.safetensors", "--model"});
  EXPECT_EQ(o.opponent, Opponent::SELF);
  EXPECT_EQ(o.max_plies, 7);
  const nlohmann::ordered_json facts{
      {"max_plies", o.max_plies}, {"device", "cpu"}, {"compute_precision", "fp32"}, {"kernels", "board"}};
  const nlohmann::ordered_json options = evaluate_options().record(o, facts);
  std::vector<std::string> keys;
  for (const auto& [key, value] : options.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"data", "positions", "search", "search_starts", "search_budget",
                                            "random_edit_budget", "max_positions", "threshold", "games", "opponent",
                                            "adversary_games", "greedy", "seed", "max_plies", "device",
                                            "compute_precision", "kernels"}));
  EXPECT_EQ(options["opponent"], "self");
  EXPECT_EQ(options["max_plies"], 7);
  EXPECT_THROW(app.parse(std::vector<std::string>{"stockfish", "--opponent", "m", "--model"}), CLI::ValidationError);

  EvaluateOptions bad;
  bad.model = "m.safetensors";
  bad.games = 1;
  bad.batch_size = 0;
  EXPECT_EQ(test::error_of([&] { run_evaluate(bad); }), "--batch-size 0 is not in 1..65536");
  bad.batch_size = 1;
  bad.games = 0;
  EXPECT_EQ(test::error_of([&] { run_evaluate(bad); }),
            "nothing to do: give --data, --positions, --games, --adversary-games, --search or --fen");
}

}  // namespace
}  // namespace legalnet::run
