// How fast this machine takes a run's training steps, measured before the run: `train
// --time-budget` fixes the number of steps from it, and train says the expected time.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "compute/choices.h"
#include "nn/model_config.h"

namespace legalnet::nn {
class PolicyNet;
}

namespace legalnet::train {

struct SpeedProbe {
  double samples_per_second = 0;  // one process's rows per second of its median step
  int64_t steps = 0;              // steps timed (after the warm-up steps)
  double seconds = 0;             // their time
};

// Times training steps (forward in `precision`, BCE, backward, clipping, Adam) of a fresh net of
// `config` placed as a run places its own (device, memory format, kernels) on one synthetic batch
// of `batch_size` rows, for about `seconds` after five warm-up steps; the rate is the median step's. It draws no number
// from torch's generators (their state is put back) and no row from the data, so the run that follows is the very run
// that --max-steps with the resulting count gives. `make_optimizer` makes the run's optimizer for the probe's net (the
// step's cost depends on it: torch's fused Adam is 1.4-2x a CUDA step of the default).
using OptimizerFactory = std::function<std::unique_ptr<torch::optim::Optimizer>(nn::PolicyNet&)>;
SpeedProbe probe_training_speed(const nn::ModelConfig& config, int batch_size, nn::Precision precision,
                                nn::Kernels kernels, const torch::Device& device, double seconds,
                                const OptimizerFactory& make_optimizer);

// The steps that fit `budget_seconds` at `probe`'s rate, `share` of the time left for the
// steps themselves (the rest: loading, validation, checkpoints); at least 1.
int64_t steps_within(double budget_seconds, const SpeedProbe& probe, int64_t rows_per_step, double share);

}  // namespace legalnet::train
