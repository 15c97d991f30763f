// The training loss: binary cross-entropy of every move index's logit against whether the move
// is legal, averaged over the batch's B x 4096 indices. It is computed on the logits a model
// trains only (PolicyNet::forward_trained): an index the model fixes off holds FIXED_OFF_LOGIT
// and is never legal, so it adds softplus(-20) = 2e-9 and no gradient, added here as a
// constant. The value is BCE on forward_logits()'s [B,4096] to float rounding; for the models
// with 1792 trained logits the loss and its backward touch 2.3x fewer values and skip the
// scatter into 4096 columns (docs/benchmarks.md, issue 13).
#pragma once

#include <torch/torch.h>

#include "nn/forward.h"
#include "nn/models.h"

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

// The BCE over all B x 4096 indices: summed (Reduction::Sum) or averaged (Reduction::Mean). With
// a margin m (train --logit-margin) each trained logit z is scored as z - m (2t - 1): a legal
// move's as if m logits lower, an illegal one's as if m higher, so that the loss goes on asking
// for confidence where plain BCE's gradient, sigmoid(z) - t, has all but stopped (a logistic
// loss on data it separates grows the logits' scale only as the log of the steps:
// docs/benchmarks.md#log-2026-12-08-confidence). The indices the model fixes off count as plain
// BCE.
torch::Tensor policy_loss(const TrainedLogits& t, at::Reduction::Reduction reduction = at::Reduction::Mean,
                          double margin = 0);

// A training step's loss, ready for backward: policy_loss(forward_trained_logits(...)) to float
// rounding. On a CPU the trained logits are read where the forward pass wrote them
// (PolicyNet::forward_gathered, fp32 or bf16; one source, or two it sums in fp32: the resnet's
// pairs head) and one node computes the loss and their gradient (kernels/bce_rows.h), in place of
// the gather, the cast, torch's BCE and their backward scatter (about 10 of torch's nodes, 4-5
// ms of the default's 50 ms bf16 step on 2 Zen 4 cores; docs/benchmarks.md). Each row's loss is summed in double and
// the rows in order: the same value for any thread count. On CUDA: the composition of torch's ops.
// With `rules` (a resnet with the rules head, train --rules-weight), the head's BCE against the
// rule planes rules.targets ([B,P,8,8], encode::write_rule_targets in the inputs' frame), summed
// over its P x 64 values a row, divided by the same B x 4096 and times rules.weight, is added: at
// weight 1 each rule value weighs as much as one move index.
struct RulesTerm {
  torch::Tensor targets;
  double weight = 0;
};
// `margin`: policy_loss's, on the move logits only.
torch::Tensor training_loss(PolicyNet& net, const torch::Tensor& planes, const torch::Tensor& targets,
                            Precision precision, const RulesTerm& rules = {}, double margin = 0);

// Its CPU half, after the forward pass: the mean BCE of the gathered logits (fp32 or bf16, on
// the CPU) against the targets (float [B,4096]) at the trained move indices `moves`
// (PolicyNet::trained_moves), with policy_loss's margin. Throws legalnet::Error for logits it
// cannot read.
torch::Tensor gathered_loss(const PolicyNet::Gathered& gathered, const torch::Tensor& targets,
                            const torch::Tensor& moves, double margin = 0);

}  // namespace legalnet::nn
