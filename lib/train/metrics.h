// Loss and thresholded precision/recall of a model over in-memory positions.
#pragma once

#include <torch/torch.h>

#include "nn/models.h"
#include "nn/precision.h"
#include "train/training_data.h"

namespace legalnet::train {

struct Evaluation {
  double loss = 0;  // BCE with logits, averaged over positions x 4096 like the predecessor's
  uint64_t positions = 0, true_positives = 0, false_positives = 0, false_negatives = 0;
  double precision() const { return ratio(true_positives, true_positives + false_positives); }
  double recall() const { return ratio(true_positives, true_positives + false_negatives); }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r > 0 ? 2 * p * r / (p + r) : 0.0;
  }
  static double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; }
};

// Evaluates in eval mode without gradients, thresholding the sigmoid at 0.5 (logit 0), on
// inputs of the net's kind (ModelConfig::inputs) computed in `precision`.
Evaluation evaluate_loss(nn::PolicyNet& net, const CompactPositions& data, int batch_size, const torch::Device& device,
                         encode::InputKind inputs, nn::Precision precision);

}  // namespace legalnet::train
