#include "run/train/optimizer.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>

#include <optional>
#include <type_traits>
#include <vector>

namespace legalnet::run {

template <typename Base>
torch::Tensor FusedAdam<Base>::step(torch::optim::Optimizer::LossClosure closure) {
  using State = std::conditional_t<std::is_same_v<Base, torch::optim::AdamW>, torch::optim::AdamWParamState,
                                   torch::optim::AdamParamState>;
  using Options = std::conditional_t<std::is_same_v<Base, torch::optim::AdamW>, torch::optim::AdamWOptions,
                                     torch::optim::AdamOptions>;
  // The fused kernel walks a parameter, its gradient and its state as one flat array each: they
  // must share one dense layout (autograd and the checkpoint reader keep the parameter's).
  // (A dimension of size 1 has any stride: a 1x1 convolution's weight is both layouts at once.)
  auto same_layout = [](const torch::Tensor& p, const torch::Tensor& t) {
    if (!t.defined()) return true;
    if (t.sizes() != p.sizes()) return false;
    for (int64_t i = 0; i < p.dim(); ++i)
      if (p.size(i) > 1 && t.stride(i) != p.stride(i)) return false;
    return true;
  };
  // One kernel call takes one device's tensors: every parameter on the first one's, a CPU or a
  // CUDA device (where the step is launch-bound: Base::step is about ten launches a parameter).
  // (CUDA's kernel also wants one dtype in its lists.)
  std::optional<torch::Device> device;
  std::optional<torch::ScalarType> dtype;
  for (auto& group : this->param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    for (const auto& p : group.params()) {
      if (!device) device = p.device(), dtype = p.scalar_type();
      bool fused = !o.amsgrad() && p.device() == *device && (p.is_cpu() || p.is_cuda()) && p.scalar_type() == *dtype &&
                   (!p.grad().defined() || p.grad().scalar_type() == *dtype) && p.is_non_overlapping_and_dense() &&
                   same_layout(p, p.grad());
      if (const auto it = this->state_.find(p.unsafeGetTensorImpl()); fused && it != this->state_.end()) {
        const auto& s = static_cast<const State&>(*it->second);
        fused = same_layout(p, s.exp_avg()) && same_layout(p, s.exp_avg_sq());
      }
      if (!fused) return Base::step(std::move(closure));
    }
  }
  torch::Tensor loss;
  if (closure != nullptr) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  torch::NoGradGuard no_grad;
  for (auto& group : this->param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps, to_increment;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = this->state_[p.unsafeGetTensorImpl()];
      if (slot == nullptr) {  // as Base::step starts a parameter's state
        auto fresh = std::make_unique<State>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& s = static_cast<State&>(*slot);
      s.step(s.step() + 1);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(s.exp_avg());
      exp_avg_sqs.push_back(s.exp_avg_sq());
      steps.push_back(step_tensor(p, s.step(), to_increment));  // the kernel reads this step's count
    }
    if (params.empty()) continue;
    if (!to_increment.empty()) at::_foreach_add_(to_increment, 1);  // CUDA: one launch for all
    const auto [beta1, beta2] = o.betas();
    if constexpr (std::is_same_v<Base, torch::optim::AdamW>)
      at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, {}, steps, o.lr(), beta1, beta2, o.weight_decay(),
                        o.eps(), false, false);
    else
      at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, {}, steps, o.lr(), beta1, beta2, o.weight_decay(), o.eps(),
                       false, false);
  }
  ++fused_steps_;
  return loss;
}

template <typename Base>
torch::Tensor FusedAdam<Base>::step_tensor(const torch::Tensor& p, int64_t step,
                                           std::vector<torch::Tensor>& to_increment) {
  if (p.is_cpu()) return torch::full({}, double(step));
  // On CUDA a scalar on the device per parameter, kept from step to step and advanced by one
  // _foreach_add_ (a new one every step would be a copy to the device each); made again from the
  // state's step where that is not the one it holds (a new parameter, a loaded checkpoint, a
  // step of Base's) or on another device than p.
  auto& kept = device_steps_[p.unsafeGetTensorImpl()];
  if (!kept.value.defined() || kept.holds != step - 1 || kept.value.device() != p.device()) {
    kept.value = torch::full({}, double(step - 1), torch::TensorOptions().device(p.device()));
  }
  kept.holds = step;  // once to_increment is applied
  to_increment.push_back(kept.value);
  return kept.value;
}

template class FusedAdam<torch::optim::Adam>;
template class FusedAdam<torch::optim::AdamW>;

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o, nn::PolicyNet& net) {
  switch (o.optimizer) {
    case Optimizer::ADAM:
      return std::make_unique<FusedAdam<torch::optim::Adam>>(
          net.parameters(), torch::optim::AdamOptions(o.lr).weight_decay(o.weight_decay));
    case Optimizer::ADAMW:
      return std::make_unique<FusedAdam<torch::optim::AdamW>>(
          net.parameters(), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
    case Optimizer::SGD: break;
  }
  return std::make_unique<torch::optim::SGD>(
      net.parameters(), torch::optim::SGDOptions(o.lr).momentum(0.9).nesterov(true).weight_decay(o.weight_decay));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace legalnet::run
