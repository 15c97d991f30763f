// An exponential moving average of a net's weights (--ema): the average, not the last step's
// weights, is what validation measures and what the model file holds. The learning rate's cosine
// decay already damps the step-to-step noise; the average damps what is left of it over about
// 1 / (1 - decay) steps.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nn/model_file.h"

namespace legalnet::train {

class WeightAverage {
 public:
  // Starts from the net's current tensors (parameters and floating-point buffers).
  WeightAverage(torch::nn::Module& net, double decay);

  // After an optimizer step: average <- average + (1 - d) (weights - average), with
  // d = min(decay, (1 + steps) / (10 + steps)) so that the first steps do not carry the
  // initial weights for thousands of steps.
  void update(int64_t steps_done);

  // Exchanges the net's tensors with the average's; a second call swaps them back.
  void swap();

  double decay_at(int64_t steps_done) const;

  // The average's tensors named `prefix` + the net's names, sharing their storage (a checkpoint
  // saves them and a resumed run loads into them).
  nn::NamedTensors named(const std::string& prefix) const;

 private:
  std::vector<std::string> names_;
  std::vector<torch::Tensor> live_, average_;
  double decay_;
};

}  // namespace legalnet::train
