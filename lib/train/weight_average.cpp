#include "train/weight_average.h"

#include <algorithm>

namespace legalnet::train {

WeightAverage::WeightAverage(torch::nn::Module& net, double decay) : decay_(decay) {
  torch::NoGradGuard no_grad;
  for (const auto& p : net.named_parameters()) {
    names_.push_back(p.key());
    live_.push_back(p.value());
  }
  // Batch norm's running statistics follow the weights they normalize; its step counter does not average.
  for (const auto& b : net.named_buffers())
    if (b.value().is_floating_point()) {
      names_.push_back(b.key());
      live_.push_back(b.value());
    }
  for (const torch::Tensor& t : live_) average_.push_back(t.detach().clone());
}

double WeightAverage::decay_at(int64_t steps_done) const {
  return std::min(decay_, double(1 + steps_done) / double(10 + steps_done));
}

void WeightAverage::update(int64_t steps_done) {
  torch::NoGradGuard no_grad;
  torch::_foreach_lerp_(average_, live_, 1.0 - decay_at(steps_done));
}

nn::NamedTensors WeightAverage::named(const std::string& prefix) const {
  nn::NamedTensors named;
  for (size_t i = 0; i < names_.size(); ++i) named.emplace_back(prefix + names_[i], average_[i]);
  return named;
}

void WeightAverage::swap() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < live_.size(); ++i) {
    torch::Tensor keep = live_[i].detach().clone();
    live_[i].detach().copy_(average_[i]);
    average_[i].copy_(keep);
  }
}

}  // namespace legalnet::train
