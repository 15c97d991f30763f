// Model files (model.safetensors) and training checkpoints (checkpoint.safetensors), both
// safetensors (nn/safetensors.h): data only, so that opening a colleague's model runs nothing
// from it. A model file holds the net's parameters and buffers under torch's names (those of
// Python's state_dict) and, in the safetensors metadata, `format` (MODEL_FORMAT), `config` (the
// architecture, JSON) and `training` (how it was trained, JSON): evaluate rebuilds the network
// from the file alone, and Python reads it with the `safetensors` package. The config travels
// inside the one file rather than beside it, so a model is one file that is renamed into place
// whole and cannot be separated from its architecture.
#pragma once

#include <torch/torch.h>

#include <string>

#include "nn/models.h"

namespace legalnet::nn {

constexpr const char* MODEL_FORMAT = "legalnet-model 2";
constexpr const char* CHECKPOINT_FORMAT = "legalnet-checkpoint 2";

struct LoadedModel {
  ModelConfig config;
  std::shared_ptr<PolicyNet> net;
  std::string training_json;  // "{}" when absent
};

// Writes atomically (temporary name, then rename).
void save_model(const std::string& path, const ModelConfig& config, PolicyNet& net, const std::string& training_json);
// Throws legalnet::Error for a missing, corrupt, foreign or old (TorchScript) file. Every size is
// checked before anything is allocated: the header against the file, the config's sizes against
// MAX_PARAMETERS and against the floats the file holds, then every tensor's name, dtype and
// shape against the net the config makes.
LoadedModel load_model(const std::string& path, const torch::Device& device);

// The most steps a checkpoint may claim (2^40): step x batch x processes stays far inside int64.
constexpr int64_t MAX_CHECKPOINT_STEP = int64_t(1) << 40;

// Everything a resumed run needs to continue as if never stopped (the data order is a function
// of seed and step, so no random-number state is kept).
struct TrainState {
  int64_t step = 0;            // optimizer steps done
  int64_t samples = 0;         // training samples seen
  double elapsed_seconds = 0;  // training time before this process
  // train --mine-share's pool of mined positions (run/train/hard_positions.h's text: one FEN a
  // line), checked by the run that resumes; "" without mining (and then not in the file).
  std::string mined_positions;
};

void save_checkpoint(const std::string& path, const ModelConfig& config, PolicyNet& net,
                     torch::optim::Optimizer& optimizer, const TrainState& state, PolicyNet* average = nullptr);
// A checkpoint holds the net's tensors as `model.NAME`, the optimizer's per-parameter state as
// `optimizer.NAME.FIELD` (Adam, AdamW: step, exp_avg, exp_avg_sq; SGD: momentum_buffer), and in
// its metadata the format, config, optimizer kind, step, samples and elapsed seconds (and the
// mined positions of a run that mines); a run with train --ema also its average of the weights,
// `average.NAME` (`average`: a net of the same config).
// Loads weights and optimizer state (and the average, which a checkpoint must hold exactly when
// `average` is given) into existing objects (already on `device`); returns the state.
TrainState load_checkpoint(const std::string& path, const ModelConfig& expected, PolicyNet& net,
                           torch::optim::Optimizer& optimizer, const torch::Device& device,
                           PolicyNet* average = nullptr);

}  // namespace legalnet::nn
