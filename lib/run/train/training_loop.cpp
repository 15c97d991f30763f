#include "run/train/training_loop.h"

#include "run/training_record.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <nlohmann/json.hpp>
#include <optional>

#include "chess/movegen.h"
#include "nn/loss.h"
#include "nn/predict.h"
#include "run/evaluate/tensorboard_figures.h"
#include "run/model_card.h"
#include "run/train/optimizer.h"
#include "run/train/time_budget.h"
#include "train/metrics.h"
#include "train/tensorboard.h"
#include "util/console.h"
#include "util/error.h"
#include "util/files.h"
#include "util/stop_request.h"

namespace legalnet::run {
namespace {

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The run's hyperparameters for TensorBoard's HParams plugin: options.json's options as the run
// began, its numbers, strings and bools (the model's keys by their own names, "kind" as "arch";
// the machine's device and CPU), without its provenance (the version, the command line, the
// data's paths and fingerprints). The same names in every run: TensorBoard lists those of one.
std::vector<train::tensorboard::HParam> run_hparams(const nlohmann::ordered_json& options) {
  std::vector<train::tensorboard::HParam> hparams;
  auto add = [&](const std::string& name, const nlohmann::ordered_json& v) {
    if (v.is_boolean())
      hparams.push_back({name, v.get<bool>()});
    else if (v.is_number())
      hparams.push_back({name, v.get<double>()});
    else if (v.is_string())
      hparams.push_back({name, v.get<std::string>()});
  };
  for (const auto& [key, value] : options.items()) {
    if (key == "tool" || key == "version" || key == "command_line") continue;
    if (key == "model" && value.is_object()) {
      for (const auto& [name, v] : value.items())
        if (!options.contains(name)) add(name == "kind" ? "arch" : name, v);
    } else if (key == "machine" && value.is_object()) {
      for (const auto& [name, v] : value.items()) add(name, v);
    } else {
      add(key, value);
    }
  }
  return hparams;
}

// The HParams plugin's experiment and session (its metrics: validation's and evaluate's
// headline, which evaluate writes beside the run's events), and the recipe as text: the command
// line and options.json (as the run began: --time-budget may move its end).
std::vector<std::string> hparams_values(const std::string& options_json) {
  namespace tb = train::tensorboard;
  const auto options = nlohmann::ordered_json::parse(options_json);
  const std::vector<tb::HParam> hparams = run_hparams(options);
  std::vector<std::string> metrics{"val/loss", "val/f1"};
  for (const std::string& tag : headline_tags()) metrics.push_back(tag);
  const std::string command = options.contains("command_line") && options["command_line"].is_string()
                                  ? options["command_line"].get<std::string>()
                                  : "";
  return {tb::hparams_experiment_value(hparams, metrics), tb::hparams_session_start_value(hparams, wall_time()),
          tb::text_value("recipe", "```\n" + command + "\n```\n\n```json\n" + options_json + "\n```")};
}

}  // namespace

TrainingLoop::TrainingLoop(const TrainingRun& run)
    : run_(run),
      o_(run.o),
      rank0_(run.ranks.is_main()),
      verbose_(rank0_ && !run.o.quiet),
      progress_("steps", uint64_t(run.schedule.steps()), verbose_ && stderr_is_terminal()),
      start_(std::chrono::steady_clock::now()),
      window_start_time_(run.state.elapsed_seconds),
      window_start_samples_(run.state.samples),
      schedule_(run.schedule),
      options_(run.options_json),
      budget_check_every_(budget_check_interval(run.schedule.first_steps)) {
  report_.out = o_.out;
  if (o_.mine_share > 0) {
    mined_.emplace(MiningOptions{o_.mine_share, o_.mine_every, o_.mine_pool, o_.seed});
    if (run.state.step > 0) mined_->restore(run.state.mined_positions, run.folder.checkpoint_path());
  }
}

namespace {

// The net's parameters, then its buffers: one order for the net and its average.
std::vector<torch::Tensor> tensors_of(nn::PolicyNet& net) {
  std::vector<torch::Tensor> all = net.parameters();
  for (const auto& b : net.buffers()) all.push_back(b);
  return all;
}

}  // namespace

void TrainingLoop::update_average() {
  torch::NoGradGuard no_grad;
  // A short memory at first (TensorFlow's and timm's): the start's random weights fade at once.
  const double step = double(run_.state.step);
  const double keep = std::min(o_.ema, (1 + step) / (10 + step));
  const std::vector<torch::Tensor> net = tensors_of(run_.net), average = tensors_of(*run_.average);
  for (size_t i = 0; i < net.size(); ++i) {
    if (average[i].is_floating_point())
      average[i].lerp_(net[i], 1 - keep);
    else
      average[i].copy_(net[i]);  // batch norm's count of batches
  }
}

void TrainingLoop::take_average() {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> net = tensors_of(run_.net), average = tensors_of(*run_.average);
  for (size_t i = 0; i < net.size(); ++i) net[i].copy_(average[i]);
}

TrainingLoop::Next TrainingLoop::next() {
  if (run_.state.step >= schedule_.steps()) return Next::FINISH;
  if (o_.stop_at_step > 0 && run_.state.step >= o_.stop_at_step) return Next::PAUSE;
  // A stop asked by SIGTERM or SIGUSR1 (preemption: util/stop_request.h): every rank pauses at the
  // same step, with a checkpoint. One process looks at its flag every step; ranks ask each other
  // every 16 steps (an all-reduce), well inside a cluster's grace period.
  if ((run_.ranks.world_size() == 1 || run_.state.step % 16 == 0) && run_.ranks.any(stop_requested() != 0)) {
    report_.stop_signal = stop_requested() ? stop_requested() : SIGTERM;  // 0 here: another rank's
    return Next::PAUSE;
  }
  // The ranks stop together: rank clocks differ, and a rank left alone waits forever.
  if (o_.max_time > 0 && run_.ranks.any(run_.state.elapsed_seconds + seconds() >= o_.max_time)) {
    if (verbose_) say("train: --max-time {} s reached at step {}\n", o_.max_time, run_.state.step);
    return Next::FINISH;
  }
  return Next::STEP;
}

// The batch's loss, its gradients computed; torch's errors as one line (out of memory: what to try).
torch::Tensor TrainingLoop::step_loss(const train::Batch& batch) {
  try {
    torch::Tensor loss = nn::training_loss(run_.net, batch.planes, batch.targets, run_.precision,
                                           {batch.rules, o_.rules_weight}, o_.logit_margin);
    run_.optimizer.zero_grad();
    loss.backward();
    return loss;
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (what.find("out of memory") != std::string::npos)
      throw Error(fmt::format("{} out of memory at --batch-size {}; try --batch-size {}", run_.device.str(),
                              o_.batch_size, std::max(1, o_.batch_size / 2)));
    throw Error("torch: " + what.substr(0, what.find('\n')));
  }
}

train::Batch TrainingLoop::with_mined_rows(const train::Batch& batch) {
  const int64_t step = run_.state.step;
  if (mined_->due(step)) {
    // Every process refreshes the same pool: the same net, batch norm's statistics averaged.
    train::average_buffers(run_.ranks, run_.net);
    run_.net.eval();
    mined_->refresh(step, [&](const std::vector<const chess::Position*>& positions, std::vector<float>& probs) {
      probs = nn::predict(run_.model, run_.net, positions, run_.device, run_.precision);
    });
  }
  const int64_t rows = batch.planes.size(0);
  const int k = HardPositions::rows_of(o_.mine_share, int(rows));
  const std::vector<const chess::Position*> positions = mined_->draw(step, run_.ranks.rank(), k);
  train::Batch mined = train::allocate_batch(positions.size(), run_.model.inputs, false, run_.model.rule_targets());
  std::vector<uint16_t> legal;
  for (size_t i = 0; i < positions.size(); ++i) {
    legal.clear();
    for (chess::Move m : chess::MoveList(*positions[i])) legal.push_back(uint16_t(encode::move_index(m)));
    train::fill_row(mined, i, run_.model.inputs, run_.model.rule_targets(), encode::BoardState::of(*positions[i]),
                    legal.data(), legal.data() + legal.size());
  }
  const int64_t kept = rows - int64_t(positions.size());
  auto joined = [kept](const torch::Tensor& given, const torch::Tensor& more) {
    return given.defined() ? torch::cat({given.narrow(0, 0, kept), more.to(given.device())}) : given;
  };
  return {joined(batch.planes, mined.planes), joined(batch.targets, mined.targets), joined(batch.rules, mined.rules)};
}

void TrainingLoop::step(const train::Batch& given) {
  nn::TrainState& state = run_.state;
  const train::Batch batch = mined_ ? with_mined_rows(given) : given;
  run_.net.train();
  set_lr(run_.optimizer, schedule_.lr(state.step));
  const torch::Tensor loss = step_loss(batch);
  const double value = train::average_gradients(run_.ranks, run_.net, loss);
  if (!std::isfinite(value))
    throw Error(fmt::format("the loss became {} at step {}; stopped ({}); try a lower --lr or --clip", value,
                            state.step,
                            run_.folder.last_checkpoint_step() < 0
                                ? std::string("no checkpoint was written yet")
                                : fmt::format("the last good checkpoint is '{}', step {}",
                                              run_.folder.checkpoint_path(), run_.folder.last_checkpoint_step())));
  if (o_.clip > 0) torch::nn::utils::clip_grad_norm_(run_.net.parameters(), o_.clip);
  run_.optimizer.step();
  ++state.step;
  if (run_.average) update_average();
  state.samples += int64_t(o_.batch_size) * run_.ranks.world_size();
  loss_sum_ += value;
  ++loss_count_;
  progress_.update(uint64_t(state.step));
  if (state.step % o_.eval_every == 0 || state.step == schedule_.steps()) validation_row();
  if (state.step % o_.checkpoint_every == 0 && state.step < schedule_.steps()) {
    state.elapsed_seconds += seconds();  // checkpoint time is not training time
    checkpoint();
    state.elapsed_seconds -= seconds();
  }
  if (o_.time_budget > 0) watch_budget();
}

void TrainingLoop::watch_budget() {
  const int64_t step = run_.state.step;
  if (step % budget_check_every_ != 0 || step >= schedule_.steps()) return;
  const double now = run_.state.elapsed_seconds + seconds();
  if (pace_from_step_ < 0) {  // the first point: the pace is measured from here
    pace_from_step_ = step;
    pace_from_seconds_ = now;
    return;
  }
  const double pace = (now - pace_from_seconds_) / double(step - pace_from_step_);
  const int64_t fits = run_.ranks.fewest(steps_at_pace(o_.time_budget * 60, now, step, pace, run_.most_steps));
  const std::optional<Replan> replan = replan_for_pace(schedule_, step, fits);
  if (!replan) return;
  const double peak_was = schedule_.peak_at(step);
  schedule_.replans.push_back(*replan);
  if (verbose_) {
    progress_.finish();
    const double peak = schedule_.peak_at(step);
    say("train: --time-budget {:g} min: steps {}-{} went at {:.0f} samples/s a process: the run now ends at step "
        "{}, not {}{}\n",
        o_.time_budget, pace_from_step_, step, o_.batch_size / pace, replan->steps, schedule_.steps_at(step - 1),
        peak != peak_was ? fmt::format(" (peak rate {:.4g}, the architecture's for that length)", peak) : "");
  }
  progress_.set_total(uint64_t(schedule_.steps()));
  nlohmann::ordered_json options = nlohmann::ordered_json::parse(options_);
  options["replan"] = replans_text(schedule_.replans);
  options["total_steps"] = schedule_.steps();
  options_ = options.dump(2);
  if (rank0_) run_.folder.rewrite_options(options_);
}

TrainReport TrainingLoop::pause() {
  run_.state.elapsed_seconds += seconds();
  checkpoint();
  report_.steps = run_.state.step;
  report_.train_seconds = run_.state.elapsed_seconds;
  run_.ranks.barrier();
  return report_;
}

TrainReport TrainingLoop::finish() {
  nn::TrainState& state = run_.state;
  progress_.finish();
  if (run_.average) take_average();
  if (loss_count_) validation_row();
  state.elapsed_seconds += seconds();
  checkpoint();
  report_.finished = true;
  report_.steps = state.step;
  report_.train_seconds = state.elapsed_seconds;
  report_.model_path = run_.folder.model_path();
  if (rank0_) {
    nlohmann::ordered_json training = nlohmann::ordered_json::parse(options_);
    training["steps_done"] = state.step;
    training["samples_seen"] = state.samples;
    training["train_seconds"] = state.elapsed_seconds;
    training["final_val_loss"] = report_.val_loss;
    // The model holds what decides it (byte for byte the same for the same options and data),
    // options.json beside it the whole record (run/training_record.h).
    run_.folder.rewrite_options(training.dump(2));
    save_model(run_.folder.model_path(), run_.model, run_.net, model_record(training).dump());
    // The card beside the model, from the record the model holds (evaluate --model-card adds
    // the figures it measures).
    OutputFile card(run_.folder.model_card_path(), Links::REPLACE);
    card.write(model_card(training, nullptr));
    card.commit();
    run_.folder.finish();
  }
  run_.ranks.barrier();
  return report_;
}

// A row of metrics.csv (and TensorBoard's scalars) from a validation pass, on every rank.
void TrainingLoop::validation_row() {
  const nn::TrainState& state = run_.state;
  train::average_buffers(run_.ranks, run_.net);
  const train::Evaluation v = train::all_ranks_sum(
      run_.ranks,
      train::evaluate_loss(run_.net, run_.data.val_share, 1024, run_.device, run_.model.inputs, run_.precision));
  const double now = state.elapsed_seconds + seconds();
  const double rate = double(state.samples - window_start_samples_) / std::max(1e-9, now - window_start_time_);
  const double train_loss = loss_count_ ? loss_sum_ / double(loss_count_) : 0.0;
  const int64_t step = state.step;
  const train::MetricsRow row{.step = step,
                              .samples = state.samples,
                              .epoch = double(state.samples) / double(run_.data.train_positions),
                              .train_loss = train_loss,
                              .val_loss = v.loss,
                              .precision = v.precision(),
                              .recall = v.recall(),
                              .f1 = v.f1(),
                              .samples_per_s = rate,
                              .lr = schedule_.lr(std::max<int64_t>(step - 1, 0)),
                              .elapsed_s = now};
  // The run's first row (the only one at or before --eval-every) carries TensorBoard's hparams
  // and recipe: in the run's records through any checkpoint after it, once a run, resumed or not.
  if (rank0_)
    run_.folder.append_metrics(train::metrics_line(row), step, train::metrics_scalars(row),
                               step <= o_.eval_every ? hparams_values(options_) : std::vector<std::string>{});
  if (verbose_) {
    progress_.finish();
    say("step {:>7}  train {:.5f}  val {:.5f}  P {:.4f} R {:.4f} F1 {:.4f}  {} samples/s ({:.1f} GFLOP/s){}\n", step,
        train_loss, v.loss, v.precision(), v.recall(), v.f1(), human_count(rate),
        3 * run_.model.forward_flops() * rate / 1e9,
        mined_ ? fmt::format("  mined: {:.1f}% wrong, margin {:.3f}", 100 * mined_->figures().wrong_share,
                             mined_->figures().mean_margin)
               : "");
  }
  loss_sum_ = 0;
  loss_count_ = 0;
  window_start_time_ = now;
  window_start_samples_ = state.samples;
  report_.val_loss = v.loss;
  report_.val_precision = v.precision();
  report_.val_recall = v.recall();
  report_.samples_per_second = rate;
}

// Every rank holds the same model at a checkpoint; rank 0 writes it.
void TrainingLoop::checkpoint() {
  train::average_buffers(run_.ranks, run_.net);
  if (mined_) run_.state.mined_positions = mined_->text();
  if (rank0_)
    save_checkpoint(run_.folder.checkpoint_path(), run_.model, run_.net, run_.optimizer, run_.state, run_.average);
  run_.folder.checkpoint_written(run_.state.step);
}

}  // namespace legalnet::run
