// The optimizer a run steps (--optimizer) and its learning-rate schedule (--lr, --warmup,
// --min-lr-ratio).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "nn/models.h"
#include "run/train/options.h"

namespace legalnet::run {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, nn::PolicyNet& net);

// The learning rate at `step` of `total`: linear warm-up, then cosine decay.
double scheduled_lr(const TrainOptions& o, int64_t step, int64_t total);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace legalnet::run
