#include "nn/loss.h"

#include <cmath>

#include "encode/encode.h"
#include "nn/models.h"

namespace legalnet::nn {

TrainedLogits forward_trained_logits(PolicyNet& net, const torch::Tensor& planes, const torch::Tensor& targets,
                                     Precision precision) {
  TrainedLogits t;
  t.logits = forward_logits_of(net, planes, precision, &PolicyNet::forward_trained);
  const auto& moves = net.trained_moves(targets.device());
  t.fixed_off = encode::MOVE_INDICES - moves.numel();
  t.targets = t.fixed_off ? targets.index_select(1, moves) : targets;
  return t;
}

torch::Tensor policy_loss(const TrainedLogits& t, at::Reduction::Reduction reduction) {
  const int64_t rows = t.logits.size(0);
  // Each fixed-off index: target 0, so its BCE is log(1 + e^FIXED_OFF_LOGIT).
  const double fixed_off_sum = double(rows) * double(t.fixed_off) * std::log1p(std::exp(double(FIXED_OFF_LOGIT)));
  auto sum = torch::binary_cross_entropy_with_logits(t.logits, t.targets, {}, {}, at::Reduction::Sum) + fixed_off_sum;
  if (reduction == at::Reduction::Sum) return sum;
  return sum / (double(rows) * double(encode::MOVE_INDICES));
}

}  // namespace legalnet::nn
