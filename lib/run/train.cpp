#include "run/train.h"

#include <fmt/core.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/dataset_identity.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "train/batches.h"
#include "nn/device.h"
#include "train/distributed.h"
#include "nn/loss.h"
#include "train/metrics.h"
#include "nn/model_file.h"
#include "nn/precision.h"
#include "train/run_folder.h"
#include "train/stream.h"
#include "util/console.h"
#include "util/error.h"
#include "util/choices.h"
#include "util/files.h"
#include "util/progress.h"
#include "util/provenance.h"

namespace legalnet::run {
using namespace nn;  // the networks this tool runs
using namespace train;  // the training machinery it wires together
namespace {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, PolicyNet& net) {
  switch (o.optimizer) {
    case Optimizer::ADAM:
      return std::make_unique<torch::optim::Adam>(net.parameters(),
                                                  torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
    case Optimizer::ADAMW:
      return std::make_unique<torch::optim::AdamW>(net.parameters(),
                                                   torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
    case Optimizer::SGD: break;
  }
  return std::make_unique<torch::optim::SGD>(
      net.parameters(), torch::optim::SGDOptions(o.lr).momentum(0.9).nesterov(true).weight_decay(o.weight_decay));
}

// Writes --report, the run's JSON summary (rank 0), and gives the result back.
TrainResult reported(const TrainOptions& o, const TrainResult& r, bool finished) {
  if (o.report.empty() || !o.ranks.is_main()) return r;
  nlohmann::ordered_json j = provenance_json("train", o.command_line);
  j["out"] = o.out;
  j["finished"] = finished;
  j["steps"] = r.steps;
  j["val_loss"] = r.final_val_loss;
  j["val_precision"] = r.precision;
  j["val_recall"] = r.recall;
  j["samples_per_second"] = r.samples_per_second;
  OutputFile out(o.report);
  out.write(j.dump(2) + "\n");
  out.commit();
  return r;
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

// options.json's "data_files" and "val_files": each file's resolved path, counts and
// fingerprint, by which --resume knows the data, whatever its path is spelled as.
nlohmann::json data_identities(const std::vector<std::string>& paths) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& path : paths) {
    const data::DatasetIdentity id = data::dataset_identity(path);
    files.push_back({{"path", id.path}, {"positions", id.positions}, {"games", id.games}, {"fingerprint", id.fingerprint}});
  }
  return files;
}

std::string options_json(const TrainOptions& o, const ModelConfig& model, Precision precision, int64_t total_steps,
                         size_t train_rows, size_t val_rows, const nlohmann::json& identities) {
  nlohmann::ordered_json j = provenance_json("train", o.command_line);
  j["data"] = o.data;
  j["val"] = o.val;
  j["val_fraction"] = o.val_fraction;
  j["val_max"] = o.val_max;
  j["model"] = nlohmann::json::parse(model.to_json());
  j["model_description"] = model.describe();
  j["input_kind"] = model.inputs_name();
  j["input_kind_from_move_generator"] = encode::input_spec(model.inputs).from_move_generator;
  j["compute_precision"] = precision_name(precision);
  j["kernels"] = kernels_name(o.kernels);
  j["forward_flops_per_position"] = model.forward_flops();
  j["epochs"] = o.epochs;
  j["max_steps"] = o.max_steps;
  j["total_steps"] = total_steps;
  j["batch_size"] = o.batch_size;
  j["lr"] = o.lr;
  j["optimizer"] = choice_of(OPTIMIZERS, o.optimizer).name;
  j["weight_decay"] = o.weight_decay;
  j["warmup"] = o.warmup;
  j["min_lr_ratio"] = o.min_lr_ratio;
  j["clip"] = o.clip;
  j["position_ply_limit"] = o.position_ply_limit;
  j["check_weight"] = o.check_weight;
  j["rare_weight"] = o.rare_weight;
  j["data_mode"] = choice_of(DATA_MODES, o.data_mode).name;
  j["shuffle_buffer"] = o.shuffle_buffer;
  j["processes"] = o.ranks.world_size;
  j["seed"] = o.seed;
  j["train_positions"] = train_rows;
  j["val_positions"] = val_rows;
  j["data_files"] = identities["data_files"];
  j["val_files"] = identities["val_files"];
  return j.dump(2);
}

// Bytes a position takes in memory (CompactPositions: 64 squares, about 35 legal moves of
// 2 bytes, game, ply, offsets); the estimate behind --data-mode auto.
constexpr double COMPACT_BYTES_PER_POSITION = 160;

// MemAvailable of /proc/meminfo ("MemAvailable:   20912644 kB"); 0 when unknown.
uint64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) * 1024;
  return 0;
}

struct DataPlan {
  bool streamed = false;
  std::string description;  // said at the start of a run
};

// Memory when the datasets fit in half the available memory (shared by the processes on
// this node, each of which holds them all), else streamed.
// The processes decide together: nodes with less memory make every process stream.
DataPlan plan_data(const TrainOptions& o, Collectives& ranks) {
  uint64_t positions = 0;
  for (const auto& path : o.data) positions += data::DatasetReader(path).num_positions();
  const double need = double(positions) * COMPACT_BYTES_PER_POSITION;
  const uint64_t available = available_memory_bytes();
  // Unknown memory (no /proc/meminfo): assume the data fits, as before streaming existed.
  const double budget = available ? double(available) / 2 / std::max(1, o.ranks.local_world_size) : need;
  DataPlan plan;
  plan.streamed = ranks.any(o.data_mode == DataMode::STREAM || (o.data_mode == DataMode::AUTO && need > budget));
  if (plan.streamed)
    plan.description =
        fmt::format("streaming {} positions from the files ({}data-mode {}), shuffle buffer {} positions", positions,
                    o.data_mode == DataMode::AUTO
                        ? fmt::format("about {} MB would not fit in half the memory available, ", int64_t(need / 1e6))
                        : "",
                    choice_of(DATA_MODES, o.data_mode).name, o.shuffle_buffer);
  else
    plan.description =
        fmt::format("{} positions in memory, about {} MB (data-mode {})", positions, int64_t(need / 1e6),
                    choice_of(DATA_MODES, o.data_mode).name);
  return plan;
}

// The sums behind an evaluation, added up over the ranks.
Evaluation all_ranks_sum(Collectives& ranks, const Evaluation& mine) {
  if (ranks.world_size() == 1) return mine;
  auto t = torch::tensor({mine.loss * double(mine.positions) * encode::MOVE_INDICES, double(mine.positions),
                          double(mine.true_positives), double(mine.false_positives), double(mine.false_negatives)},
                         torch::kFloat64);
  ranks.all_reduce_sum(t);
  Evaluation all;
  all.positions = uint64_t(t[1].item<double>());
  all.loss = all.positions ? t[0].item<double>() / (double(all.positions) * encode::MOVE_INDICES) : 0.0;
  all.true_positives = uint64_t(t[2].item<double>());
  all.false_positives = uint64_t(t[3].item<double>());
  all.false_negatives = uint64_t(t[4].item<double>());
  return all;
}

// One row of metrics.csv. METRICS_COLUMNS is its one schema: the header, every row and the
// TensorBoard scalars of each row come from it, and scripts/plot-metrics finds its columns by
// these names.
struct MetricsRow {
  int64_t step, samples;
  double epoch, train_loss, val_loss, precision, recall, f1, samples_per_s, lr, elapsed_s;
};

struct MetricsColumn {
  const char* name;
  std::string (*format)(const MetricsRow&);
};

constexpr MetricsColumn METRICS_COLUMNS[] = {
    {"step", [](const MetricsRow& r) { return fmt::format("{}", r.step); }},
    {"epoch", [](const MetricsRow& r) { return fmt::format("{:.4f}", r.epoch); }},
    {"samples", [](const MetricsRow& r) { return fmt::format("{}", r.samples); }},
    {"train_loss", [](const MetricsRow& r) { return fmt::format("{:.6g}", r.train_loss); }},
    {"val_loss", [](const MetricsRow& r) { return fmt::format("{:.6g}", r.val_loss); }},
    {"precision", [](const MetricsRow& r) { return fmt::format("{:.5f}", r.precision); }},
    {"recall", [](const MetricsRow& r) { return fmt::format("{:.5f}", r.recall); }},
    {"f1", [](const MetricsRow& r) { return fmt::format("{:.5f}", r.f1); }},
    {"samples_per_s", [](const MetricsRow& r) { return fmt::format("{:.1f}", r.samples_per_s); }},
    {"lr", [](const MetricsRow& r) { return fmt::format("{:.6g}", r.lr); }},
    {"elapsed_s", [](const MetricsRow& r) { return fmt::format("{:.1f}", r.elapsed_s); }},
};

std::string metrics_header() {
  std::string line;
  for (const auto& c : METRICS_COLUMNS) line += (line.empty() ? "" : ",") + std::string(c.name);
  return line + "\n";
}

std::string metrics_line(const MetricsRow& row) {
  std::string line;
  for (const auto& c : METRICS_COLUMNS) line += (line.empty() ? "" : ",") + c.format(row);
  return line + "\n";
}

// The row's TensorBoard scalars, tagged with the column names: every column but the step
// (TensorBoard's own axis), each the value metrics.csv holds (its text, as a float).
std::vector<tensorboard::Scalar> metrics_scalars(const MetricsRow& row) {
  std::vector<tensorboard::Scalar> scalars;
  for (const auto& c : METRICS_COLUMNS) {
    if (std::string_view(c.name) == "step") continue;
    const std::string text = c.format(row);
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);  // "nan" and "inf" too
    scalars.push_back({c.name, float(value)});
  }
  return scalars;
}

}  // namespace

double scheduled_lr(const TrainOptions& o, int64_t step, int64_t total) {
  const double warmup_steps = std::max(1.0, o.warmup * double(total));
  if (double(step) < warmup_steps) return o.lr * (double(step) + 1) / warmup_steps;
  const double progress = std::min(1.0, (double(step) - warmup_steps) / std::max(1.0, double(total) - warmup_steps));
  const double floor = o.lr * o.min_lr_ratio;
  return floor + (o.lr - floor) * 0.5 * (1 + std::cos(M_PI * progress));
}

namespace {

// Every option checked before any file is read: a typo costs nothing.
void validate(const TrainOptions& o) {
  if (o.data.empty()) throw Error("no training data: give --data FILE.h5");
  if (o.out.empty()) throw Error("no run folder: give --out runs/NAME");
  if (o.batch_size < 1) throw Error("--batch-size must be at least 1");
  if (!(o.lr >= 0 && std::isfinite(o.lr))) throw Error("--lr must be 0 (the architecture's) or positive");
  if (o.check_weight < 1 || o.check_weight > 100) throw Error("--check-weight must be in 1..100");
  if (o.rare_weight < 1 || o.rare_weight > 100) throw Error("--rare-weight must be in 1..100");
  if (o.epochs < 1) throw Error("--epochs must be at least 1");
  if (o.max_steps < 0) throw Error("--max-steps must be 0 (the epochs decide) or positive");
  if (o.eval_every < 1) throw Error("--eval-every must be at least 1");
  if (o.checkpoint_every < 1) throw Error("--checkpoint-every must be at least 1");
  if (o.stop_at_step < 0) throw Error("--stop-at-step must be 0 (never) or positive");
  if (!(o.weight_decay >= 0 && std::isfinite(o.weight_decay))) throw Error("--weight-decay must be 0 or positive");
  if (!(o.clip >= 0 && std::isfinite(o.clip))) throw Error("--clip must be 0 (off) or positive");
  if (!(o.warmup >= 0 && o.warmup <= 1)) throw Error("--warmup must be in 0..1");
  if (!(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1)) throw Error("--min-lr-ratio must be in 0..1");
  if (!(o.val_fraction >= 0 && o.val_fraction < 1)) throw Error("--val-fraction must be in 0..1 (1 excluded)");
  if (!(o.max_time >= 0 && o.max_time < 1e9)) throw Error("--max-time must be 0 (no limit) or a number of seconds");
  if (o.shuffle_buffer < 1) throw Error("--shuffle-buffer must be at least 1");
  if (o.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
  if (o.position_ply_limit < 0) throw Error("--position-ply-limit must be 0 (all positions) or positive");
}

// The training rows (in memory or streamed), and this rank's share of the validation rows.
struct TrainingData {
  DataPlan plan;
  std::unique_ptr<CompactPositions> train_rows;  // memory mode: what `source` reads (a stable address)
  std::unique_ptr<BatchSource> source;
  uint64_t train_positions = 0;  // over all ranks
  size_t val_positions = 0;      // over all ranks
  CompactPositions val_share;
};

TrainingData load_training_data(const TrainOptions& o, const ModelConfig& model, Collectives& ranks, bool verbose) {
  const RowWeights weights{o.check_weight, o.rare_weight};
  TrainingData d;
  d.plan = plan_data(o, ranks);
  d.train_rows = std::make_unique<CompactPositions>();
  CompactPositions& train_rows = *d.train_rows;
  CompactPositions val_rows;
  LoadOptions load;
  load.position_ply_limit = o.position_ply_limit;
  load.quiet = !verbose;
  LoadOptions val_load = load;
  val_load.max_rows = o.val_max;
  if (d.plan.streamed) {
    StreamOptions so;
    so.paths = o.data;
    so.batch_size = o.batch_size;
    so.seed = o.seed;
    so.weights = weights;
    so.position_ply_limit = o.position_ply_limit;
    so.val_fraction = o.val.empty() ? o.val_fraction : 0.0;
    so.shuffle_buffer = o.shuffle_buffer;
    so.slice = {ranks.rank(), ranks.world_size()};
    so.inputs = model.inputs;
    auto stream = std::make_unique<StreamBatches>(so);
    // Ranks hold different blocks: all take the steps the rank with the fewest rows can.
    const auto rows_per_epoch = ranks.all_gather(int64_t(stream->rows_per_epoch()));
    const auto fewest = std::min_element(rows_per_epoch.begin(), rows_per_epoch.end());
    if (*fewest < o.batch_size)
      throw Error(
          fmt::format("stream mode: rank {} of {} reads {} positions (the files' blocks of 8192 rows are dealt "
                      "to the ranks), fewer than one batch of {}; use fewer processes or --data-mode memory",
                      fewest - rows_per_epoch.begin(), ranks.world_size(), *fewest, o.batch_size));
    stream->set_steps_per_epoch(*fewest / o.batch_size);
    for (int64_t rows : ranks.all_gather(int64_t(stream->rows()))) d.train_positions += uint64_t(rows);
    val_rows = o.val.empty() ? streamed_validation_rows(o.data, o.val_fraction, o.seed, o.position_ply_limit, o.val_max)
                             : load_positions(o.val, val_load);
    d.source = std::move(stream);
  } else {
    if (o.val.empty()) {
      split_by_game(load_positions(o.data, load), o.val_fraction, o.seed, train_rows, val_rows);
    } else {
      train_rows = load_positions(o.data, load);
      val_rows = load_positions(o.val, val_load);
    }
    d.train_positions = train_rows.size();
    d.source = std::make_unique<MemoryBatches>(train_rows, o.batch_size, o.seed, weights,
                                               BatchSlice{ranks.rank(), ranks.world_size()}, model.inputs);
  }
  val_rows.keep_first(o.val_max);
  d.val_positions = val_rows.size();
  // Each rank validates its share of the rows; the sums are added up over the ranks.
  for (size_t r = val_rows.size() * size_t(ranks.rank()) / size_t(ranks.world_size());
       r < val_rows.size() * size_t(ranks.rank() + 1) / size_t(ranks.world_size()); ++r)
    d.val_share.append_row(val_rows, r);
  return d;
}

// One run's loop over the objects run_train wires together: the step, the validation rows of
// metrics.csv, the checkpoints, and the end (a finished model, or a pause to --resume).
class TrainingLoop {
 public:
  enum class Next { STEP, PAUSE, FINISH };

  TrainingLoop(const TrainOptions& o, const ModelConfig& model, PolicyNet& net, torch::optim::Optimizer& optimizer,
               Collectives& ranks, RunFolder& folder, TrainingData& data, TrainState& state, torch::Device device,
               Precision precision, int64_t total_steps)
      : o_(o),
        model_(model),
        net_(net),
        optimizer_(optimizer),
        ranks_(ranks),
        folder_(folder),
        data_(data),
        state_(state),
        device_(device),
        precision_(precision),
        total_steps_(total_steps),
        rank0_(ranks.is_main()),
        verbose_(rank0_ && !o.quiet),
        progress_("steps", uint64_t(total_steps), verbose_ && stderr_is_terminal()),
        start_(std::chrono::steady_clock::now()),
        window_start_time_(state.elapsed_seconds),
        window_start_samples_(state.samples) {}

  // What comes next: a step, a pause at --stop-at-step, or the end (all steps, or --max-time).
  Next next() {
    if (state_.step >= total_steps_) return Next::FINISH;
    if (o_.stop_at_step > 0 && state_.step >= o_.stop_at_step) return Next::PAUSE;
    // The ranks stop together: rank clocks differ, and a rank left alone waits forever.
    if (o_.max_time > 0 && ranks_.any(state_.elapsed_seconds + seconds() >= o_.max_time)) {
      if (verbose_) say("train: --max-time {} s reached at step {}\n", o_.max_time, state_.step);
      return Next::FINISH;
    }
    return Next::STEP;
  }

  void step(const Batch& batch) {
    net_.train();
    set_lr(optimizer_, scheduled_lr(o_, state_.step, total_steps_));
    torch::Tensor loss;
    try {
      loss = policy_loss(forward_trained_logits(net_, batch.planes, batch.targets, precision_));
      optimizer_.zero_grad();
      loss.backward();
    } catch (const c10::Error& e) {
      const std::string what = e.what_without_backtrace();
      if (what.find("out of memory") != std::string::npos)
        throw Error(fmt::format("{} out of memory at --batch-size {}; try --batch-size {}", device_.str(),
                                o_.batch_size, std::max(1, o_.batch_size / 2)));
      throw Error("torch: " + what.substr(0, what.find('\n')));
    }
    const double value = average_gradients(ranks_, net_, loss);
    if (!std::isfinite(value))
      throw Error(fmt::format(
          "the loss became {} at step {}; stopped ({}); try a lower --lr or --clip", value, state_.step,
          folder_.last_checkpoint_step() < 0 ? std::string("no checkpoint was written yet")
                                             : fmt::format("the last good checkpoint is '{}', step {}",
                                                           folder_.checkpoint_path(), folder_.last_checkpoint_step())));
    if (o_.clip > 0) torch::nn::utils::clip_grad_norm_(net_.parameters(), o_.clip);
    optimizer_.step();
    ++state_.step;
    state_.samples += int64_t(o_.batch_size) * ranks_.world_size();
    loss_sum_ += value;
    ++loss_count_;
    progress_.update(uint64_t(state_.step));
    if (state_.step % o_.eval_every == 0 || state_.step == total_steps_) validate_and_log();
    if (state_.step % o_.checkpoint_every == 0 && state_.step < total_steps_) {
      state_.elapsed_seconds += seconds();  // checkpoint time is not training time
      checkpoint();
      state_.elapsed_seconds -= seconds();
    }
  }

  // Ends this process at --stop-at-step, checkpointed, for --resume.
  TrainResult pause() {
    state_.elapsed_seconds += seconds();
    checkpoint();
    if (verbose_) say("train: stopped after step {}; continue with --resume\n", state_.step);
    result_.steps = state_.step;
    ranks_.barrier();
    return result_;
  }

  // The last validation row and checkpoint, and rank 0 saves the model.
  TrainResult finish(const std::string& options_json) {
    progress_.finish();
    if (loss_count_) validate_and_log();
    state_.elapsed_seconds += seconds();
    checkpoint();
    result_.steps = state_.step;
    if (rank0_) {
      nlohmann::ordered_json training = nlohmann::json::parse(options_json);
      training["steps_done"] = state_.step;
      training["samples_seen"] = state_.samples;
      training["train_seconds"] = state_.elapsed_seconds;
      training["final_val_loss"] = result_.final_val_loss;
      save_model(folder_.model_path(), model_, net_, training.dump());
      folder_.finish();
      if (verbose_)
        say("train: {} steps in {:.1f} s; model in {}\n", state_.step, state_.elapsed_seconds, folder_.model_path());
    }
    ranks_.barrier();
    return result_;
  }

 private:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

  void validate_and_log() {
    average_buffers(ranks_, net_);
    const Evaluation v =
        all_ranks_sum(ranks_, evaluate_loss(net_, data_.val_share, 1024, device_, model_.inputs, precision_));
    const double now = state_.elapsed_seconds + seconds();
    const double rate = double(state_.samples - window_start_samples_) / std::max(1e-9, now - window_start_time_);
    const double train_loss = loss_count_ ? loss_sum_ / double(loss_count_) : 0.0;
    const int64_t step = state_.step;
    const MetricsRow row{.step = step,
                         .samples = state_.samples,
                         .epoch = double(state_.samples) / double(data_.train_positions),
                         .train_loss = train_loss,
                         .val_loss = v.loss,
                         .precision = v.precision(),
                         .recall = v.recall(),
                         .f1 = v.f1(),
                         .samples_per_s = rate,
                         .lr = scheduled_lr(o_, std::max<int64_t>(step - 1, 0), total_steps_),
                         .elapsed_s = now};
    if (rank0_) folder_.append_metrics(metrics_line(row), step, metrics_scalars(row));
    if (verbose_) {
      progress_.finish();
      say("step {:>7}  train {:.5f}  val {:.5f}  P {:.4f} R {:.4f} F1 {:.4f}  {} samples/s ({:.1f} GFLOP/s)\n", step,
          train_loss, v.loss, v.precision(), v.recall(), v.f1(), human_count(rate),
          3 * model_.forward_flops() * rate / 1e9);
    }
    loss_sum_ = 0;
    loss_count_ = 0;
    window_start_time_ = now;
    window_start_samples_ = state_.samples;
    result_.final_val_loss = v.loss;
    result_.precision = v.precision();
    result_.recall = v.recall();
    result_.samples_per_second = rate;
  }

  // Every rank holds the same model at a checkpoint; rank 0 writes it.
  void checkpoint() {
    average_buffers(ranks_, net_);
    if (rank0_) save_checkpoint(folder_.checkpoint_path(), model_, net_, optimizer_, state_);
    folder_.checkpoint_written(state_.step);
  }

  const TrainOptions& o_;
  const ModelConfig& model_;
  PolicyNet& net_;
  torch::optim::Optimizer& optimizer_;
  Collectives& ranks_;
  RunFolder& folder_;
  TrainingData& data_;
  TrainState& state_;
  const torch::Device device_;
  const Precision precision_;
  const int64_t total_steps_;
  const bool rank0_, verbose_;
  Progress progress_;
  const std::chrono::steady_clock::time_point start_;
  double loss_sum_ = 0, window_start_time_;
  int64_t loss_count_ = 0, window_start_samples_;
  TrainResult result_;
};

}  // namespace

// The wiring: options checked before any I/O, the run folder, the device, the data, the net
// and its optimizer, then the loop.
TrainResult run_train(const TrainOptions& given) {
  validate(given);
  const ModelConfig model = given.model.resolved();
  TrainOptions o = given;  // with the architecture's defaults, as options.json records them
  if (o.lr == 0) o.lr = choice_of(DEFAULT_LRS, model.kind).lr;
  torch::Device device = pick_device(o.device);
  if (device.is_cuda() && o.ranks.world_size > 1 && (o.device == "auto" || o.device == "cuda"))
    device = torch::Device(torch::kCUDA, c10::DeviceIndex(o.ranks.local_rank % int(torch::cuda::device_count())));
  const Precision precision = resolve_precision(o.compute_precision, device);
  std::vector<NamedPath> inputs;
  for (const auto& path : o.data) inputs.push_back({"--data", path});
  for (const auto& path : o.val) inputs.push_back({"--val", path});
  check_outputs_are_not_inputs({{"--report", o.report}}, inputs);
  if (!o.report.empty() && o.ranks.is_main()) check_output_writable({"--report", o.report});
  RunFolder folder(o.out, o.resume, o.force, inputs);
  if (o.ranks.is_main()) folder.lock();
  const nlohmann::json identities = {{"data_files", data_identities(o.data)}, {"val_files", data_identities(o.val)}};
  if (o.resume) folder.check_resumed_options(options_json(o, model, precision, 0, 0, 0, identities));

  configure_threads(o.threads);
  keep_freed_memory();
  configure_for_speed(device, precision);
  torch::manual_seed(o.seed);
  Collectives ranks(o.ranks, device);
  const bool verbose = ranks.is_main() && !o.quiet;

  TrainingData data = load_training_data(o, model, ranks, verbose);
  auto net = make_model(model);
  net->to(device);
  choose_memory_format(*net);
  net->use_kernels(o.kernels);
  broadcast_state(ranks, *net);
  auto optimizer = make_optimizer(o, *net);
  int64_t total_steps = int64_t(o.epochs) * data.source->steps_per_epoch();
  if (o.max_steps > 0) total_steps = std::min(total_steps, o.max_steps);
  if (total_steps <= 0) throw Error("nothing to train: fewer positions than one batch, or --epochs 0");

  TrainState state;
  if (o.resume) {
    state = load_checkpoint(folder.checkpoint_path(), model, *net, *optimizer, device);
    // The data order and the schedule are functions of the step within the run's length.
    if (state.step > total_steps)
      throw Error(fmt::format("--resume: '{}' is at step {}, past the {} steps of this run (--epochs, --max-steps)",
                              folder.checkpoint_path(), state.step, total_steps));
    folder.checkpoint_written(state.step);
  }
  const std::string options =
      options_json(o, model, precision, total_steps, data.train_positions, data.val_positions, identities);
  if (ranks.is_main()) folder.start(options, metrics_header());
  if (verbose) {
    if (o.device == "auto" && !device.is_cuda()) say("train: --device auto: {}: running on the CPU\n", cpu_fallback_reason());
    say("train: {} ({} parameters, {:.1f} MFLOP a position) on {} in {}, {} training / {} validation positions, {} "
        "steps of {}\n",
        model.describe(), count_parameters(*net), model.forward_flops() / 1e6, device.str(), precision_name(precision),
        data.train_positions, data.val_positions, total_steps, o.batch_size * ranks.world_size());
    say("train: inputs {}: {}\n", model.inputs_name(), encode::input_spec(model.inputs).description);
    say("train: {}\n", data.plan.description);
    if (ranks.world_size() > 1)
      say("train: {} processes ({}), {} positions per process and step\n", ranks.world_size(), ranks.backend(),
          o.batch_size);
  }

  BatchLoader loader(std::move(data.source), state.step, device);
  TrainingLoop loop(o, model, *net, *optimizer, ranks, folder, data, state, device, precision, total_steps);
  for (;;) {
    switch (loop.next()) {
      case TrainingLoop::Next::STEP: loop.step(loader.next()); break;
      case TrainingLoop::Next::PAUSE: return reported(o, loop.pause(), false);
      case TrainingLoop::Next::FINISH: return reported(o, loop.finish(options), true);
    }
  }
}

}  // namespace legalnet::run
