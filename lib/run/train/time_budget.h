// --time-budget, and the expected time a long run says before its first step: this machine's
// step rate, measured on a fresh copy of the net (train/speed_probe.h) before the run.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "run/train/options.h"
#include "train/distributed.h"

namespace legalnet::run {

// The run's length, and the rate the probe measured (samples/s a process; 0: none ran).
struct StepPlan {
  int64_t steps = 0;
  double probe_samples_per_second = 0;
};

// The run's number of steps: `total_steps` as the options make it, or with --time-budget the
// steps that fit the budget (the fewest any rank measured), which are then also o.max_steps (so
// options.json records them). A run of many steps, or one with a budget, says the rate measured
// and the time expected when `verbose`.
StepPlan planned_steps(TrainOptions& o, const nn::ModelConfig& model, nn::Precision precision,
                       const torch::Device& device, train::Collectives& ranks, int64_t total_steps, bool verbose);

// A finished run with --time-budget that took longer than the budget says so, with the rate its
// steps kept against the probe's: the probe's few seconds can meet a fast spell of a shared
// machine (on a 2-core VM, 3.4 k samples/s against the run's 2.26 k; docs/benchmarks.md, issue 32).
void say_budget_overrun(const TrainOptions& o, const StepPlan& plan, int64_t steps, double train_seconds);

}  // namespace legalnet::run
