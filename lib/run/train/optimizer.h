// The optimizer a run steps (--optimizer) and its learning-rate schedule (--lr, --warmup,
// --min-lr-ratio).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "nn/models.h"
#include "run/train/options.h"

namespace legalnet::run {

// Adam and AdamW step through torch's fused kernels (FusedAdam below) where every parameter is
// on the CPU, SGD through torch's.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, nn::PolicyNet& net);

// torch::optim::Adam or AdamW (Base) whose step runs torch's fused kernel (at::_fused_adam_ or
// _fused_adamw_, what torch.optim.Adam(fused=True) runs): one pass over each parameter where
// Base::step runs eight ops a parameter (0.9 ms of a 40 ms step of the default net on 2 cores,
// most of it the ops' own cost on 40 small tensors). The state is Base's own (step, exp_avg,
// exp_avg_sq), so checkpoints and --resume do not change; the same formula as Base's up to
// rounding. Parameters on another device, a gradient or state in another layout than its
// parameter's, or amsgrad: Base::step.
template <typename Base>
class FusedAdam : public Base {
 public:
  using Base::Base;
  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;
  // Steps taken by the fused kernel (the others went through Base::step).
  int64_t fused_steps() const { return fused_steps_; }

 private:
  int64_t fused_steps_ = 0;
};

// The learning rate at `step` of `total`: linear warm-up, then cosine decay.
double scheduled_lr(const TrainOptions& o, int64_t step, int64_t total);

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace legalnet::run
