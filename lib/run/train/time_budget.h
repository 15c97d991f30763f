// --time-budget, and the expected time a long run says before its first step: this machine's
// step rate, measured on a fresh copy of the net (train/speed_probe.h) before the run.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>

#include "run/train/options.h"
#include "run/train/schedule.h"
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

// While a --time-budget run trains it checks its pace every 1/BUDGET_CHECKS of its first plan,
// from the second such point on: the probe's few seconds before the run can meet a fast or a slow
// spell of a shared machine, and the loader and the validation passes share the cores with the
// steps. The pace is that of the steps since the first point (validation passes included): the
// first steps' allocations and kernel choices are not the run's.
inline constexpr int64_t BUDGET_CHECKS = 20;
// A check moves the run's end (a Replan) so that at that pace the steps end at BUDGET_TARGET of
// the budget (the rest: the last validation pass, checkpoint and save, and the pace's noise),
// where the steps that fit differ from the plan by more than REPLAN_TOLERANCE of it; none in the
// last LAST_REPLAN share of the plan. On a 2-core VM the pace of 200-step stretches swings by
// 5-10%: a tighter tolerance re-planned at nearly every check (docs/benchmarks.md, issue 32).
inline constexpr double BUDGET_TARGET = 0.95;
inline constexpr double REPLAN_TOLERANCE = 0.03;
inline constexpr double LAST_REPLAN = 0.95;

// Steps between two checks of a run planned for `first_steps`.
int64_t budget_check_interval(int64_t first_steps);
// The steps that fit the budget when `seconds` of it are spent after `step` steps and the steps
// go on at `seconds_per_step`: at least one more, at most `cap` (the options' steps: --max-steps,
// or the epochs').
int64_t steps_at_pace(double budget_seconds, double seconds, int64_t step, double seconds_per_step, int64_t cap);
// The re-plan a check at `step` makes where `fits` steps fit (the fewest any rank found), or none.
std::optional<Replan> replan_for_pace(const Schedule& schedule, int64_t step, int64_t fits);

// A finished run with --time-budget that took longer than the budget says so, with the rate its
// steps kept against the probe's: the probe's few seconds can meet a fast spell of a shared
// machine (on a 2-core VM, 3.4 k samples/s against the run's 2.26 k; docs/benchmarks.md, issue 32).
void say_budget_overrun(const TrainOptions& o, const StepPlan& plan, int64_t steps, double train_seconds);

}  // namespace legalnet::run
