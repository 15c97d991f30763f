#include "train/metrics.h"

#include <numeric>

#include "encode/encode.h"
#include "train/batches.h"
#include "nn/loss.h"

namespace legalnet::train {

Evaluation evaluate_loss(nn::PolicyNet& net, const CompactPositions& data, int batch_size, const torch::Device& device,
                         encode::InputKind inputs, nn::Precision precision) {
  torch::NoGradGuard no_grad;
  net.eval();
  Evaluation e;
  std::vector<uint32_t> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0u);
  double loss_sum = 0;
  for (size_t first = 0; first < rows.size(); first += size_t(batch_size)) {
    const size_t n = std::min(size_t(batch_size), rows.size() - first);
    Batch b = make_batch(data, rows.data() + first, n, false, inputs);
    // The trained logits are enough: a fixed-off index is never predicted and never legal.
    const auto t = forward_trained_logits(net, b.planes.to(device), b.targets.to(device), precision);
    loss_sum += policy_loss(t, at::Reduction::Sum).item<double>();
    const auto predicted = t.logits > 0, legal = t.targets > 0.5;
    e.true_positives += uint64_t((predicted & legal).sum().item<int64_t>());
    e.false_positives += uint64_t((predicted & ~legal).sum().item<int64_t>());
    e.false_negatives += uint64_t((~predicted & legal).sum().item<int64_t>());
  }
  e.positions = data.size();
  e.loss = data.size() ? loss_sum / (double(data.size()) * encode::MOVE_INDICES) : 0.0;
  return e;
}

}  // namespace legalnet::train
