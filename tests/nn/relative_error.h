// The board kernels' tests compare tensors by their largest error relative to the reference's
// scale: max |a - b| / max |b|, in fp64 (an element near zero would make an element-wise ratio
// meaningless).
#pragma once

#include <torch/torch.h>

namespace legalnet::nn {

inline double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  const auto reference = b.to(torch::kDouble);
  return (a.to(torch::kDouble) - reference).abs().max().item<double>() / reference.abs().max().item<double>();
}

}  // namespace legalnet::nn
