// The optimizer a run steps (--optimizer), and the rate its schedule gives it
// (run/train/schedule.h).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "nn/models.h"
#include "run/train/options.h"

namespace legalnet::run {

// Adam and AdamW step through torch's fused kernels (FusedAdam below) where every parameter is
// on one CPU or CUDA device, SGD through torch's.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, nn::PolicyNet& net);

// torch::optim::Adam or AdamW (Base) whose step runs torch's fused kernel (at::_fused_adam_ or
// _fused_adamw_, what torch.optim.Adam(fused=True) runs): one pass over each parameter where
// Base::step runs eight ops a parameter (0.9 ms of a 40 ms step of the default net on 2 cores,
// most of it the ops' own cost on 40 small tensors; on an H200 ~400 launches: the fused step made
// the default's step 1.4-2.0x faster there, docs/benchmarks.md). The state is Base's own (step, exp_avg,
// exp_avg_sq), so checkpoints and --resume do not change; the same formula as Base's up to
// rounding. Parameters on several devices or on another than a CPU or CUDA, a gradient or state
// in another layout than its parameter's, or amsgrad: Base::step.
template <typename Base>
class FusedAdam : public Base {
 public:
  using Base::Base;
  torch::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) override;
  // Steps taken by the fused kernel (the others went through Base::step).
  int64_t fused_steps() const { return fused_steps_; }

 private:
  // The kernel's step for parameter p, whose state has just reached `step`: a float scalar on p's
  // device (on CUDA kept per parameter, holding step - 1, and added to to_increment, which the
  // caller advances by one before the kernel runs).
  torch::Tensor step_tensor(const torch::Tensor& p, int64_t step, std::vector<torch::Tensor>& to_increment);
  struct DeviceStep {
    torch::Tensor value;  // the scalar the kernel reads
    int64_t holds = 0;    // the step it holds once advanced
  };
  std::unordered_map<const c10::TensorImpl*, DeviceStep> device_steps_;
  int64_t fused_steps_ = 0;
};

void set_lr(torch::optim::Optimizer& optimizer, double lr);

}  // namespace legalnet::run
