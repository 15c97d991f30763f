#include "run/train/optimizer.h"

#include <algorithm>
#include <cmath>

namespace legalnet::run {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, nn::PolicyNet& net) {
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

double scheduled_lr(const TrainOptions& o, int64_t step, int64_t total) {
  const double warmup_steps = std::max(1.0, o.warmup * double(total));
  if (double(step) < warmup_steps) return o.lr * (double(step) + 1) / warmup_steps;
  const double progress = std::min(1.0, (double(step) - warmup_steps) / std::max(1.0, double(total) - warmup_steps));
  const double floor = o.lr * o.min_lr_ratio;
  return floor + (o.lr - floor) * 0.5 * (1 + std::cos(M_PI * progress));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace legalnet::run
