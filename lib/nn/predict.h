// A loaded net asked about positions: its move probabilities in board order, as evaluate's
// dataset pass, its games and the UCI engine read them.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "chess/position.h"
#include "compute/arithmetic.h"
#include "nn/model_file.h"

namespace legalnet::nn {

// Probabilities (sigmoid of the logits) for a batch of positions, in board order (from*64+to
// of the board, whatever the frame of the model's inputs): out[i * 4096 + index]. With bce_sum,
// also adds the batch's summed BCE against the legal moves, computed from the logits by
// nn::policy_loss: the function train minimises and validates with, so evaluate's bce and
// train's val_loss are one measure.
std::vector<float> predict(const LoadedModel& model, const std::vector<const chess::Position*>& positions,
                           const torch::Device& device, Precision precision, double* bce_sum = nullptr);
// The same of a net in training (train --mine-share's mining), in the mode it is in: the caller
// sets eval() for batch norm's running statistics.
std::vector<float> predict(const ModelConfig& config, PolicyNet& net,
                           const std::vector<const chess::Position*>& positions, const torch::Device& device,
                           Precision precision, double* bce_sum = nullptr);

}  // namespace legalnet::nn
