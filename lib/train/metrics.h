// Loss and thresholded precision/recall of a model over in-memory positions, their sum over
// the ranks, and metrics.csv's row.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "compute/arithmetic.h"
#include "nn/models.h"
#include "train/distributed.h"
#include "train/tensorboard.h"
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

// The sums behind an evaluation, added up over the ranks (each validates its share of the rows).
Evaluation all_ranks_sum(Collectives& ranks, const Evaluation& mine);

// One row of metrics.csv. Its columns (metrics.cpp's METRICS_COLUMNS) are its one schema: the
// header, every row and the TensorBoard scalars of each row come from them, and
// scripts/plot-metrics finds its columns by these names.
struct MetricsRow {
  int64_t step, samples;
  double epoch, train_loss, val_loss, precision, recall, f1, samples_per_s, lr, elapsed_s;
};
std::string metrics_header();
std::string metrics_line(const MetricsRow& row);
// The row's TensorBoard scalars: every column but the step (TensorBoard's own axis), tagged in
// groups ("train/loss", "val/f1", "perf/samples_per_s": metrics.cpp's table, beside the column
// names), each the value metrics.csv holds (its text, as a float).
std::vector<tensorboard::Scalar> metrics_scalars(const MetricsRow& row);

}  // namespace legalnet::train
