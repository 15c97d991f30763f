// The learning rate along a run: a linear warm-up, then a cosine decay to the run's last step.
// A --time-budget run may move that last step while it runs (a re-plan, run/train/time_budget.h):
// from then on each step takes the rate a run planned for the new length has at that step, so
// the rate moves by what the change of length moves it, and a run that learns late that it has
// more steps is not left with the tail of the shorter cosine it began (docs/benchmarks.md).
// Where the peak was left to the architecture (--lr 0), a re-plan also takes the peak the
// architecture gives the new length: a run planned for 7,657 steps and re-planned to 48,205
// would otherwise keep a short run's peak, three times the long run's, for all its steps.
// options.json records each re-plan so that the run can be rerun.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/model_config.h"

namespace legalnet::run {

// From step `at` on (the steps done when it was made), the run ends at step `steps`.
struct Replan {
  int64_t at = 0;
  int64_t steps = 0;
  bool operator==(const Replan&) const = default;
};

// --replan's text, options.json's "replan": "AT:STEPS,AT:STEPS" (empty: none), each AT after the
// one before and each STEPS past its AT. parse_replans throws legalnet::Error naming --replan and
// the entry.
std::vector<Replan> parse_replans(const std::string& text);
std::string replans_text(const std::vector<Replan>& replans);

struct Schedule {
  double peak = 0;          // --lr: the peak of the first plan
  double warmup = 0;        // the share of the first plan's steps with a linear warm-up
  double min_lr_ratio = 0;  // the cosine ends at peak x min_lr_ratio
  int64_t first_steps = 0;  // the steps planned at the start: --max-steps, the epochs', or the budget's
  std::vector<Replan> replans;
  // The peak of a plan of that many steps, from a re-plan on (empty: `peak` for every plan, as
  // with a --lr given). The first plan keeps `peak`.
  std::function<double(int64_t steps)> peak_for;

  // The step the run ends at: the first plan's, or the last re-plan's.
  int64_t steps() const { return replans.empty() ? first_steps : replans.back().steps; }
  // The rate of step `step` (0-based: the steps done before it).
  double lr(int64_t step) const;
  // The peak of the plan in force at step `step`.
  double peak_at(int64_t step) const;
  // How much of the cosine lies behind step `step` in the plan in force there: 0 up to the end
  // of the warm-up (the first plan's), 1 at the end.
  double progress(int64_t step) const;
  // The end of the plan in force at step `step`.
  int64_t steps_at(int64_t step) const;
  double warmup_steps() const;
};

// A schedule that can run: each re-plan before the end of the plan in force at its step, and
// none past `most_steps` (the epochs' steps). Throws legalnet::Error naming --replan.
void check_replans(const Schedule& schedule, int64_t most_steps);

// The architecture's rate is for LR_BATCH rows a step (all processes together); another batch takes
// it times sqrt(rows / LR_BATCH), Adam's square-root rule. A schedule shorter than lr_steps steps
// of LR_BATCH rows (--max-steps, or those --time-budget fixed, counted in the rows they read; 0:
// the epochs decide) takes it times (lr_steps / those steps)^SHORT_SCHEDULE_POWER, at most
// SHORT_SCHEDULE_MAX times (from about 10,000 steps of 256 down). Why these constants: the
// measurements of the rate against the schedule's length in docs/benchmarks.md
// (#log-2026-11-28-short-schedule-rate, #log-2026-11-28-batch-128). A resnet with ray scans takes
// nn::RAYS_LR_SHARE of it.
inline constexpr int64_t LR_BATCH = 256;
inline constexpr double SHORT_SCHEDULE_POWER = 1.28;
inline constexpr double SHORT_SCHEDULE_MAX = 3.2;
double default_lr(nn::ModelKind kind, int64_t steps, int64_t batch_rows, nn::Mixing mixing = nn::Mixing::NONE);

}  // namespace legalnet::run
