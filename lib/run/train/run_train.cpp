#include "run/train/run_train.h"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "compute/device.h"
#include "data/dataset_identity.h"
#include "encode/inputs.h"
#include "nn/forward.h"
#include "nn/model_file.h"
#include "run/report_file.h"
#include "run/train/load_data.h"
#include "run/train/optimizer.h"
#include "run/train/schedule.h"
#include "run/train/time_budget.h"
#include "run/train/training_loop.h"
#include "train/metrics.h"
#include "train/run_folder.h"
#include "util/choices.h"
#include "util/console.h"
#include "util/error.h"
#include "util/files.h"
#include "util/option_table.h"
#include "util/provenance.h"

namespace legalnet::run {
namespace {

// options.json's "data_files" and "val_files": each file's resolved path, counts and
// fingerprint, by which --resume knows the data, whatever its path is spelled as.
nlohmann::json data_identities(const std::vector<data::DatasetReader>& readers) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& reader : readers) {
    const data::DatasetIdentity id = data::dataset_identity(reader);
    files.push_back(
        {{"path", id.path}, {"positions", id.positions}, {"games", id.games}, {"fingerprint", id.fingerprint}});
  }
  return files;
}

// What a run knows besides its options, recorded in options.json (train_options()'s facts).
struct RunFacts {
  const nn::ModelConfig& model;
  nn::Precision precision;
  int64_t total_steps = 0;
  size_t train_positions = 0, val_positions = 0;
  const nlohmann::json& identities;   // {"data_files": ..., "val_files": ...}
  std::string device;                 // "cpu", "cuda:0"
  bool lr_from_architecture = false;  // --lr left out (Schedule::peak_for)
};

// options.json: provenance, then train_options()'s keys with the run's facts.
std::string options_json(const TrainOptions& o, const RunFacts& f) {
  nlohmann::ordered_json facts;
  facts["model"] = nlohmann::json::parse(f.model.to_json());
  facts["model_description"] = f.model.describe();
  facts["input_kind"] = f.model.inputs_name();
  facts["input_kind_from_move_generator"] = encode::input_spec(f.model.inputs).from_move_generator;
  facts["compute_precision"] = nn::precision_name(f.precision);
  facts["kernels"] = nn::kernels_name(o.kernels);
  facts["forward_flops_per_position"] = f.model.forward_flops();
  facts["total_steps"] = f.total_steps;
  facts["lr_rule"] = f.lr_from_architecture ? "architecture" : "given";
  facts["processes"] = o.ranks.world_size;
  facts["train_positions"] = f.train_positions;
  facts["val_positions"] = f.val_positions;
  facts["data_files"] = f.identities["data_files"];
  facts["val_files"] = f.identities["val_files"];
  facts["machine"] = {{"cpu", cpu_description()}, {"device", f.device}};
  nlohmann::ordered_json j = provenance_json("train", o.command_line);
  const nlohmann::ordered_json recorded = train_options().record(o, facts);
  for (const auto& [key, value] : recorded.items()) j[key] = value;
  return j.dump(2);
}

// The device --device names; several processes on one node share its GPUs one each.
torch::Device run_device(const TrainOptions& o) {
  torch::Device device = nn::pick_device(o.device);
  if (device.is_cuda() && o.ranks.world_size > 1 && (o.device == "auto" || o.device == "cuda"))
    device = torch::Device(torch::kCUDA, c10::DeviceIndex(o.ranks.local_rank % int(torch::cuda::device_count())));
  return device;
}

// The run's first lines: the net, the device, the data and the processes.
void say_start(const TrainOptions& o, const TrainingRun& run, const nn::PolicyNet& net) {
  const nn::ModelConfig& model = run.model;
  if (o.device == "auto" && !run.device.is_cuda())
    say("train: --device auto: {}: running on the CPU\n", nn::cpu_fallback_reason());
  say("train: {} ({} parameters, {:.1f} MFLOP a position) on {} in {}, {} training / {} validation positions, {} "
      "steps of {}\n",
      model.describe(), nn::count_parameters(net), model.forward_flops() / 1e6, run.device.str(),
      nn::precision_name(run.precision), run.data.train_positions, run.data.val_positions, run.schedule.steps(),
      o.batch_size * run.ranks.world_size());
  say("train: inputs {}: {}\n", model.inputs_name(), encode::input_spec(model.inputs).description);
  say("train: {}\n", run.data.plan.description);
  if (run.ranks.world_size() > 1)
    say("train: {} processes ({}), {} positions per process and step\n", run.ranks.world_size(), run.ranks.backend(),
        o.batch_size);
}

// --data and --val as the output checks name them.
std::vector<NamedPath> input_paths(const TrainOptions& o) {
  std::vector<NamedPath> inputs;
  for (const auto& path : o.data) inputs.push_back({"--data", path});
  for (const auto& path : o.val) inputs.push_back({"--val", path});
  return inputs;
}

// The precision may change on --resume; said (once the run is under way) where auto chose
// another than the run's: a run begun before auto took fp32 for the board kernels, or on another
// machine. Only a precision's name is repeated from the file.
std::optional<std::string> precision_before_resume(const TrainOptions& given, const train::RunFolder& folder,
                                                   nn::Precision precision) {
  if (!given.resume || given.compute_precision != nn::Precision::AUTO) return std::nullopt;
  if (const auto was = folder.recorded("compute_precision"); was && *was != nn::precision_name(precision))
    for (const auto& spec : nn::PRECISIONS)
      if (*was == spec.name) return *was;
  return std::nullopt;
}

// --resume: the checkpoint's weights, optimizer state and step, within the run's length (the data
// order and the schedule are functions of the step).
nn::TrainState resumed_state(train::RunFolder& folder, const nn::ModelConfig& model, nn::PolicyNet& net,
                             torch::optim::Optimizer& optimizer, const torch::Device& device, const Schedule& schedule,
                             nn::PolicyNet* average) {
  nn::TrainState state = nn::load_checkpoint(folder.checkpoint_path(), model, net, optimizer, device, average);
  if (state.step > schedule.steps())
    throw Error(
        fmt::format("--resume: '{}' is at step {}, past the {} steps of this run (--epochs, --max-steps, --replan)",
                    folder.checkpoint_path(), state.step, schedule.steps()));
  folder.checkpoint_written(state.step);
  return state;
}

// A net of the config on the device, in the memory layout its forward pass keeps.
std::shared_ptr<nn::PolicyNet> placed_model(const nn::ModelConfig& model, const torch::Device& device) {
  auto net = nn::make_model(model);
  net->to(device);
  nn::choose_memory_format(*net);
  return net;
}

// --ema's average: a net of the same config and layout that starts as the net's copy and takes
// no gradient.
std::shared_ptr<nn::PolicyNet> averaged_copy(const nn::ModelConfig& model, nn::PolicyNet& net,
                                             const torch::Device& device) {
  auto average = placed_model(model, device);
  torch::NoGradGuard no_grad;
  const auto from = net.named_parameters();
  for (auto& p : average->named_parameters()) {
    p.value().set_requires_grad(false);
    p.value().copy_(from[p.key()]);
  }
  const auto buffers = net.named_buffers();
  for (auto& b : average->named_buffers()) b.value().copy_(buffers[b.key()]);
  return average;
}

// The loop to its end; the report written (rank 0) and said.
TrainReport run_loop(TrainingLoop& loop, train::BatchLoader& loader, const TrainOptions& o, bool verbose) {
  for (;;) {
    TrainReport report;
    switch (loop.next()) {
      case TrainingLoop::Next::STEP: loop.step(loader.next()); continue;
      case TrainingLoop::Next::PAUSE: report = loop.pause(); break;
      case TrainingLoop::Next::FINISH: report = loop.finish(); break;
    }
    report.options = o;
    // A stop by a signal is said even with --quiet: a cluster's log shows why the job ended.
    if (verbose || (report.stop_signal && o.ranks.is_main())) report.print();
    if (!o.report.empty() && o.ranks.is_main()) finished_report(o.report, report.json())->commit();
    return report;
  }
}

}  // namespace

// The wiring: options checked before any I/O, the run folder, the device, the data, the net
// and its optimizer, then the loop.
TrainReport run_train(const TrainOptions& given) {
  check_train_options(given);
  TrainOptions o = given;  // with the architecture's defaults, as options.json records them
  const nn::ModelConfig model = trained_model(o.model, o.rules_weight);
  o.model.policy_head = model.policy_head;
  // The rate left out follows the schedule's length and batch: --max-steps here, or below the steps a
  // --time-budget fits (never with --resume, so a resumed run's rate is known before its check).
  const int64_t step_rows = int64_t(o.batch_size) * o.ranks.world_size;  // all processes' rows a step
  if (o.lr == 0 && o.time_budget == 0) o.lr = default_lr(model.kind, o.max_steps, step_rows, model.mixing);
  const torch::Device device = run_device(o);
  // auto's precision depends on whether a resnet's convolutions will run on the board kernels;
  // options.json records the kernels that run (torch for a net without 3x3 convolutions).
  const nn::Arithmetic arithmetic =
      nn::resolve_arithmetic(o.compute_precision, o.kernels, nn::model_spec(model.kind).board_convolutions, device);
  const nn::Precision precision = arithmetic.precision;
  o.kernels = arithmetic.kernels;
  const std::vector<NamedPath> inputs = input_paths(o);
  check_outputs_are_not_inputs({{"--report", o.report}}, inputs);
  if (!o.report.empty() && o.ranks.is_main()) check_output_writable({"--report", o.report});
  train::RunFolder folder(o.out, o.resume, o.force, inputs);
  if (o.ranks.is_main()) folder.lock();
  // Each dataset opened (and validated) once: the identities, the plan and the loaders read these.
  OpenDatasets files = open_datasets(o);
  const nlohmann::json identities = {{"data_files", data_identities(files.data)},
                                     {"val_files", data_identities(files.val)}};
  if (o.resume)
    folder.check_resumed_options(options_json(o, {model, precision, 0, 0, 0, identities, device.str(), given.lr == 0}),
                                 kept_on_resume(), kept_data());
  const std::optional<std::string> precision_was = precision_before_resume(given, folder, precision);

  nn::configure_threads(o.threads);
  nn::keep_freed_memory();
  nn::configure_for_speed(device, precision);
  torch::manual_seed(o.seed);
  train::Collectives ranks(o.ranks, device);
  const bool verbose = ranks.is_main() && !o.quiet;

  TrainingData data = load_training_data(o, model, ranks, verbose, std::move(files));
  auto net = placed_model(model, device);
  net->use_kernels(o.kernels);
  train::broadcast_state(ranks, *net);
  const int64_t epoch_steps = int64_t(o.epochs) * data.source->steps_per_epoch();
  const int64_t most_steps = o.max_steps > 0 ? std::min(epoch_steps, o.max_steps) : epoch_steps;
  if (most_steps <= 0) throw Error("nothing to train: fewer positions than one batch, or --epochs 0");
  const StepPlan plan = planned_steps(o, model, precision, device, ranks, most_steps, verbose);
  if (o.lr == 0) o.lr = default_lr(model.kind, o.max_steps, step_rows, model.mixing);
  Schedule schedule{.peak = o.lr,
                    .warmup = o.warmup,
                    .min_lr_ratio = o.min_lr_ratio,
                    .first_steps = plan.steps,
                    .replans = parse_replans(o.replan),
                    .peak_for = {}};
  if (given.lr == 0)
    schedule.peak_for = [model, step_rows](int64_t s) { return default_lr(model.kind, s, step_rows, model.mixing); };
  check_replans(schedule, epoch_steps);
  auto optimizer = make_optimizer(o, *net);
  const std::shared_ptr<nn::PolicyNet> average = o.ema > 0 ? averaged_copy(model, *net, device) : nullptr;

  nn::TrainState state =
      o.resume ? resumed_state(folder, model, *net, *optimizer, device, schedule, average.get()) : nn::TrainState{};
  const std::string options = options_json(o, {model, precision, schedule.steps(), data.train_positions,
                                               data.val_positions, identities, device.str(), given.lr == 0});
  if (ranks.is_main()) folder.start(options, train::metrics_header());
  const TrainingRun run{o,     model,  *net,      *optimizer, ranks,      folder,  data,
                        state, device, precision, schedule,   most_steps, options, average.get()};
  if (verbose) say_start(o, run, *net);
  if (verbose && precision_was)
    say("train: --resume: the run so far trained in {}; --precision auto takes {} here (--precision {} keeps "
        "the run's)\n",
        *precision_was, nn::precision_name(precision), *precision_was);

  train::BatchLoader loader(std::move(data.source), state.step, device);
  TrainingLoop loop(run);
  TrainReport report = run_loop(loop, loader, o, verbose);
  if (verbose && report.finished) say_budget_overrun(o, plan, report.steps, report.train_seconds);
  if (verbose && !loop.schedule().replans.empty())
    say("train: rerun with --max-steps {} --replan {} for the same run\n", loop.schedule().first_steps,
        replans_text(loop.schedule().replans));
  return report;
}

}  // namespace legalnet::run
