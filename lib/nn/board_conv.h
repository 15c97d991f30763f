// The board kernels (train --kernels board): a 3x3 convolution with stride 1 and padding 1
// over 8x8 boards, as Winograd F(4x4,3x3) or F(2x2,3x3), forward and backward, in our own
// autograd function. On an 8x8 board F(4x4) is 4 tiles of 6x6 and 36 multiplications per tile
// and channel pair, where the direct convolution does 576 per board: 4x less arithmetic. A block
// of 4 boards goes through the input transform, the 36 (or 16) small matrix products
// (nn/tile_gemm.h: AVX-512, AVX2+FMA or SSE) and the output transform while it is in cache; the
// instruction set is nn::board_isa() (tile_gemm.h). The weights stay a
// Conv2d's [K,C,3,3]: the model file does not change. docs/benchmarks.md (issue 32) has the
// figures and the accuracy.
#pragma once

#include <torch/torch.h>

#include "nn/kernels_choice.h"
#include "nn/model_config.h"
#include "nn/precision_choice.h"

namespace legalnet::nn {

// Output tile size: 4 (F(4x4,3x3), the default: fewer multiplications and 2.25x the input's
// memory where F(2x2) takes 4x) or 2 (exact up to rounding like the direct convolution).
enum class WinogradTile { F2 = 2, F4 = 4 };

// Whether board_conv3x3 handles these: a CPU fp32 tensor [B,C,8,8] and a [K,C,3,3] weight,
// with autocast off. Otherwise the caller runs torch::conv2d.
bool board_conv_applies(const torch::Tensor& x, const torch::Tensor& weight);

// What --kernels auto means here: BOARD on a CPU in fp32 with AVX2 or better (nn/tile_gemm.h)
// and on a CPU in bf16 with AVX512-BF16 and no AMX (board_conv3x3_bf16); TORCH otherwise (CUDA;
// the SSE baseline is slower than oneDNN; AMX, where oneDNN's kernels use the tile unit). TORCH
// and BOARD stay.
Kernels resolve_kernels(Kernels asked, const torch::Device& device, Precision precision);

// The arithmetic a net of `kind` runs in, as train and evaluate resolve it: auto's precision
// follows whether the net's 3x3 convolutions will run on the board kernels (nn::resolve_precision),
// then auto's kernels follow the precision. Only the resnet's convolutions go to the board kernels
// (ResNetImpl::use_kernels); another kind gets TORCH, what runs.
struct Arithmetic {
  Precision precision;
  Kernels kernels;
};
Arithmetic resolve_arithmetic(Precision precision, Kernels kernels, ModelKind kind, const torch::Device& device);

// conv2d(x, weight, no bias, stride 1, padding 1) for x [B,C,8,8], weight [K,C,3,3]: the
// result is [B,K,8,8] in channels-last layout; differentiable in x and weight.
torch::Tensor board_conv3x3(const torch::Tensor& x, const torch::Tensor& weight,
                            WinogradTile tile = WinogradTile::F4);

// In bf16 the board kernels take the weight gradient only (nn/board_wgrad_bf16.h: oneDNN's was
// the one slow bf16 kernel of the step); forward and input gradient stay torch's.
// Whether board_conv3x3_bf16 handles these: a CPU bf16 x [B,C,8,8] with C a multiple of 16, a
// [K,C,3,3] weight with K a multiple of 8 that needs its gradient (inference is torch's alone),
// on a CPU with AVX512-BF16 (not capped below AVX-512).
bool board_conv_bf16_applies(const torch::Tensor& x, const torch::Tensor& weight);
// conv2d(x, weight in bf16, no bias, stride 1, padding 1); differentiable in x and weight (the
// weight's gradient reaches it through the cast to bf16).
torch::Tensor board_conv3x3_bf16(const torch::Tensor& x, const torch::Tensor& weight);

}  // namespace legalnet::nn
