// The shapes the board convolutions take, fp32 and bf16 alike.
#pragma once

#include <torch/torch.h>

namespace legalnet::nn {

// x [B,C,8,8] and a [K,C,3,3] weight.
inline bool board_shapes(const torch::Tensor& x, const torch::Tensor& weight) {
  return x.dim() == 4 && x.size(2) == 8 && x.size(3) == 8 && weight.dim() == 4 && weight.size(1) == x.size(1) &&
         weight.size(2) == 3 && weight.size(3) == 3;
}

}  // namespace legalnet::nn
