// --time-budget, and the expected time a long run says before its first step: this machine's
// step rate, measured on a fresh copy of the net (train/speed_probe.h) before the run.
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "run/train/options.h"
#include "train/distributed.h"

namespace legalnet::run {

// The run's number of steps: `total_steps` as the options make it, or with --time-budget the
// steps that fit the budget (the fewest any rank measured), which are then also o.max_steps (so
// options.json records them). A run of many steps, or one with a budget, says the rate measured
// and the time expected when `verbose`.
int64_t planned_steps(TrainOptions& o, const nn::ModelConfig& model, nn::Precision precision,
                      const torch::Device& device, train::Collectives& ranks, int64_t total_steps, bool verbose);

}  // namespace legalnet::run
