// The resnet's batch norm, residual and ReLU in one autograd node (train --kernels board):
// relu(batch_norm(x) [+ residual]) over channels-last fp32 boards in training mode. Torch runs
// them as three to five nodes (norm, add, ReLU, each with its own pass over the batch forward and
// backward); here the forward is two passes (statistics, then the output) and the backward two
// (the sums, then the gradients). The module's parameters and running statistics are used and
// updated exactly as torch::nn::BatchNorm2d does, so the model file and evaluation do not change.
#pragma once

#include <torch/torch.h>

namespace legalnet::nn {

// Whether board_norm_relu handles these: a CPU fp32 tensor [B,C,H,W] in channels-last layout,
// a BatchNorm2d in training mode with its affine parameters and running statistics, autocast
// off. Otherwise the caller runs the module and torch's relu.
bool board_norm_applies(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& norm);

// relu(norm(x) + residual) (residual may be undefined: relu(norm(x))). Differentiable in x,
// residual and the norm's weight and bias; updates the running statistics and the batch count.
torch::Tensor board_norm_relu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& norm,
                              const torch::Tensor& residual = {});

}  // namespace legalnet::nn
