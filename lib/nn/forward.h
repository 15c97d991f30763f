// A net's forward pass in the arithmetic compute/arithmetic.h chose: the memory layout it keeps,
// the inputs in that layout, and its logits under autocast, returned as fp32.
#pragma once

#include <torch/torch.h>

#include "compute/arithmetic.h"

namespace legalnet::nn {

class PolicyNet;

// Channels-last weights for a net with convolutions, where oneDNN runs them faster in either
// precision (docs/benchmarks.md); nothing for a net without.
void choose_memory_format(PolicyNet& net);

// `planes` in the memory layout the net's forward pass takes (channels-last for a net that
// keeps its convolutions so).
torch::Tensor in_net_layout(const PolicyNet& net, const torch::Tensor& planes);

// The net's logits for `planes` computed in `precision`, returned as fp32 (the loss and the
// probabilities are always computed in fp32).
torch::Tensor forward_logits(PolicyNet& net, const torch::Tensor& planes, Precision precision);

// The same for another of the net's forward functions (PolicyNet::forward_trained).
torch::Tensor forward_logits_of(PolicyNet& net, const torch::Tensor& planes, Precision precision,
                                torch::Tensor (PolicyNet::*forward)(torch::Tensor));

}  // namespace legalnet::nn
