// Model files (model.pt) and training checkpoints. A model file is a TorchScript-compatible
// archive: the weights by name plus string attributes `legalnet_format`, `legalnet_config`
// (the architecture, JSON) and `legalnet_training` (how it was trained, JSON), so that
// evaluate rebuilds the network from the file alone and Python reads it with torch.jit.load.
#pragma once

#include <torch/torch.h>

#include <string>

#include "nn/models.h"

namespace legalnet::nn {

constexpr const char* MODEL_FORMAT = "legalnet-model 1";

struct LoadedModel {
  ModelConfig config;
  std::shared_ptr<PolicyNet> net;
  std::string training_json;  // "{}" when absent
};

// Writes atomically (temporary name, then rename).
void save_model(const std::string& path, const ModelConfig& config, PolicyNet& net, const std::string& training_json);
// Throws legalnet::Error for a missing, corrupt or foreign file.
LoadedModel load_model(const std::string& path, const torch::Device& device);

// Everything a resumed run needs to continue as if never stopped.
struct TrainState {
  int64_t step = 0;            // optimizer steps done
  int64_t samples = 0;         // training samples seen
  double elapsed_seconds = 0;  // training time before this process
};

void save_checkpoint(const std::string& path, const ModelConfig& config, PolicyNet& net,
                     torch::optim::Optimizer& optimizer, const TrainState& state);
// Loads weights and optimizer state into existing objects (already on `device`); returns the state.
TrainState load_checkpoint(const std::string& path, const ModelConfig& expected, PolicyNet& net,
                           torch::optim::Optimizer& optimizer, const torch::Device& device);

}  // namespace legalnet::nn
