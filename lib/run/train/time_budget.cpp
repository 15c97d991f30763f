#include "run/train/time_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "compute/device.h"
#include "run/train/optimizer.h"
#include "train/speed_probe.h"
#include "util/console.h"

namespace legalnet::run {
namespace {

// Runs shorter than this start without a measure unless they have a budget: the probe's few
// seconds matter to them, and their time is not worth predicting.
constexpr int64_t LONG_RUN_STEPS = 2000;
// Seconds of timed probe steps (after its warm-up steps, train/speed_probe.cpp).
constexpr double PROBE_SECONDS = 3.0;
// The share of a budget given to the steps at the probe's rate: the rest goes to loading the
// data, the validation passes, the checkpoints and the final save (about 5% in the default's
// runs), and to the steps of a real run being slower than the probe's median step on one
// synthetic batch (the loader shares the cores: 5-12% on 2 cores, docs/benchmarks.md).
constexpr double STEP_SHARE = 0.85;
// How much slower than the probe a long run's steps may go (the loader shares the cores; measured
// in docs/benchmarks.md#log-2026-11-28-budget-replan). The announced time is a range from the
// probe's rate to this much slower.
constexpr double RUN_SLOWDOWN = 1.15;

}  // namespace

StepPlan planned_steps(TrainOptions& o, const nn::ModelConfig& model, nn::Precision precision,
                       const torch::Device& device, train::Collectives& ranks, int64_t total_steps, bool verbose) {
  const bool budget = o.time_budget > 0;
  if (!budget && (!verbose || total_steps < LONG_RUN_STEPS)) return {total_steps, 0};
  const train::SpeedProbe probe =
      train::probe_training_speed(model, o.batch_size, precision, o.kernels, device, PROBE_SECONDS,
                                  [&](nn::PolicyNet& net) { return make_optimizer(o, net); });
  const std::string cpu = nn::cpu_model_name();
  const std::string where = device.is_cuda() ? device.str() : (cpu.empty() ? std::string("the CPU") : cpu);
  if (verbose)
    say("train: {} in {}: {:.0f} samples/s a process, measured over {} steps of {}\n", where,
        nn::precision_name(precision), probe.samples_per_second, probe.steps, o.batch_size);
  if (budget) {
    const int64_t steps = ranks.fewest(train::steps_within(o.time_budget * 60, probe, o.batch_size, STEP_SHARE));
    if (verbose && total_steps < steps)
      say("train: --time-budget {:g} min: {} steps would fit; {} (--max-steps, --epochs) are the run\n", o.time_budget,
          steps, total_steps);
    total_steps = std::min(total_steps, steps);
    o.max_steps = total_steps;
    if (verbose && total_steps == steps)
      say("train: --time-budget {:g} min: {} steps ({:.0f}% of the budget for the steps themselves), the end moved "
          "if the run's pace differs (options.json's max_steps and replan rerun the run)\n",
          o.time_budget, total_steps, STEP_SHARE * 100);
  }
  if (verbose) {
    const double minutes = double(total_steps) * o.batch_size / probe.samples_per_second / 60;
    say("train: {} steps take about {:.1f}-{:.1f} min of steps (the probe's rate, or {:.0f}% slower with the "
        "loader and validation beside them)\n",
        total_steps, minutes, minutes * RUN_SLOWDOWN, (RUN_SLOWDOWN - 1) * 100);
  }
  return {total_steps, probe.samples_per_second};
}

int64_t budget_check_interval(int64_t first_steps) { return std::max<int64_t>(1, first_steps / BUDGET_CHECKS); }

int64_t steps_at_pace(double budget_seconds, double seconds, int64_t step, double seconds_per_step, int64_t cap) {
  const double left = budget_seconds * BUDGET_TARGET - seconds;
  const double more = seconds_per_step > 0 ? std::floor(left / seconds_per_step) : 0.0;
  return std::max(step + 1, std::min(cap, step + int64_t(std::clamp(more, 0.0, 1e15))));
}

std::optional<Replan> replan_for_pace(const Schedule& schedule, int64_t step, int64_t fits) {
  const int64_t planned = schedule.steps();
  if (double(step) >= LAST_REPLAN * double(planned)) return std::nullopt;
  if (double(std::abs(fits - planned)) <= REPLAN_TOLERANCE * double(planned)) return std::nullopt;
  return Replan{step, fits};
}

void say_budget_overrun(const TrainOptions& o, const StepPlan& plan, int64_t steps, double train_seconds) {
  if (o.time_budget <= 0 || plan.probe_samples_per_second <= 0 || train_seconds <= o.time_budget * 60) return;
  say("train: --time-budget {:g} min overrun: {} steps took {:.1f} min at {:.0f} samples/s a process, where the "
      "probe measured {:.0f} before the run (the machine slowed after it, or other work shared its cores)\n",
      o.time_budget, steps, train_seconds / 60, double(steps) * o.batch_size / train_seconds,
      plan.probe_samples_per_second);
}

}  // namespace legalnet::run
