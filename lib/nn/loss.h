// The training loss: binary cross-entropy of every move index's logit against whether the move
// is legal, averaged over the batch's B x 4096 indices. It is computed on the logits a model
// trains only (PolicyNet::forward_trained): an index the model fixes off holds FIXED_OFF_LOGIT
// and is never legal, so it adds softplus(-20) = 2e-9 and no gradient, added here as a
// constant. The value is BCE on forward_logits()'s [B,4096] to float rounding; for the models
// with 1792 trained logits the loss and its backward touch 2.3x fewer values and skip the
// scatter into 4096 columns (docs/benchmarks.md, issue 13).
#pragma once

#include <torch/torch.h>

#include "nn/precision.h"

namespace legalnet::nn {

// A batch's trained logits and the targets at the same move indices.
struct TrainedLogits {
  torch::Tensor logits;   // fp32 [B,K]
  torch::Tensor targets;  // fp32 [B,K]
  int64_t fixed_off = 0;  // 4096 - K: the indices of a row the model fixes off
};

// The trained logits for `planes` computed in `precision` (as forward_logits) and the matching
// columns of `targets` (float [B,4096], on the planes' device).
TrainedLogits forward_trained_logits(PolicyNet& net, const torch::Tensor& planes, const torch::Tensor& targets,
                                     Precision precision);

// The BCE over all B x 4096 indices: summed (Reduction::Sum) or averaged (Reduction::Mean).
torch::Tensor policy_loss(const TrainedLogits& t, at::Reduction::Reduction reduction = at::Reduction::Mean);

}  // namespace legalnet::nn
