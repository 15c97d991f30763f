// Loss and thresholded precision/recall of a model over in-memory positions.
#pragma once

#include <torch/torch.h>

#include "nn/models.h"
#include "nn/precision.h"
#include "train/training_data.h"
#include "util/stats.h"

namespace legalnet::train {

// The validation pass's loss and its move counts (precision(), recall(), f1() from Counts).
struct Evaluation : Counts {
  double loss = 0;  // BCE with logits (nn::policy_loss), averaged over positions x 4096 like the predecessor's
  uint64_t positions = 0;
};

// Evaluates in eval mode without gradients, thresholding the sigmoid at 0.5 (logit 0), on
// inputs of the net's kind (ModelConfig::inputs) computed in `precision`.
Evaluation evaluate_loss(nn::PolicyNet& net, const CompactPositions& data, int batch_size, const torch::Device& device,
                         encode::InputKind inputs, nn::Precision precision);

}  // namespace legalnet::train
