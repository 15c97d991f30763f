// One run's loop: the step, the validation rows of metrics.csv, the checkpoints, and the end
// (a finished model, or a pause to --resume), over the objects run_train wires together.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "compute/arithmetic.h"
#include "nn/model_file.h"
#include "nn/models.h"
#include "run/train/hard_positions.h"
#include "run/train/load_data.h"
#include "run/train/options.h"
#include "run/train/report.h"
#include "run/train/schedule.h"
#include "train/batches.h"
#include "train/distributed.h"
#include "train/run_folder.h"
#include "util/progress.h"

namespace legalnet::run {

// What a run trains, with what and where: made by run_train, lent to the loop.
struct TrainingRun {
  const TrainOptions& o;
  const nn::ModelConfig& model;
  nn::PolicyNet& net;
  torch::optim::Optimizer& optimizer;
  train::Collectives& ranks;
  train::RunFolder& folder;
  TrainingData& data;
  nn::TrainState& state;  // the step, samples and seconds so far (a checkpoint's when resumed)
  torch::Device device;
  nn::Precision precision;
  Schedule schedule;         // the rate of each step, and the run's end
  int64_t most_steps;        // the options' steps (--max-steps, the epochs'): a --time-budget re-plan's limit
  std::string options_json;  // options.json as the run began
  // --ema: a net of the same config holding the moving average of the weights and batch norm's
  // statistics (the checkpoint's when resumed); nullptr without.
  nn::PolicyNet* average = nullptr;
};

class TrainingLoop {
 public:
  enum class Next { STEP, PAUSE, FINISH };

  explicit TrainingLoop(const TrainingRun& run);

  // What comes next: a step, a pause at --stop-at-step, or the end (all steps, or --max-time).
  Next next();
  void step(const train::Batch& batch);
  // Ends this process at --stop-at-step, checkpointed, for --resume.
  TrainReport pause();
  // The last validation row and checkpoint, and rank 0 saves the model with options.json (its
  // re-plans in) and the run's totals as its training record.
  TrainReport finish();
  // The schedule as it ended: the first plan and each re-plan.
  const Schedule& schedule() const { return schedule_; }

 private:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  torch::Tensor step_loss(const train::Batch& batch);
  // --mine-share: the batch with its last rows replaced by positions of the pool (refreshed first
  // where the step is due), on the batch's device.
  train::Batch with_mined_rows(const train::Batch& batch);
  void validation_row();
  void checkpoint();
  // --time-budget: the pace of the steps so far, checked every budget_check_every_ steps, moves
  // the run's end where it would miss the budget (run/train/time_budget.h); options.json records it.
  void watch_budget();
  // --ema: after each step, the average moves towards the net's weights and buffers; at the end
  // the net takes the average, which the last validation row measures and the model file holds.
  void update_average();
  void take_average();

  const TrainingRun run_;
  const TrainOptions& o_;
  const bool rank0_, verbose_;
  Progress progress_;
  const std::chrono::steady_clock::time_point start_;
  double loss_sum_ = 0, window_start_time_;
  int64_t loss_count_ = 0, window_start_samples_;
  TrainReport report_;
  Schedule schedule_;
  std::string options_;
  const int64_t budget_check_every_;
  std::optional<HardPositions> mined_;  // --mine-share's pool (none without mining)
  int64_t pace_from_step_ = -1;         // where the budget's pace is measured from (-1: not yet)
  double pace_from_seconds_ = 0;
};

}  // namespace legalnet::run
