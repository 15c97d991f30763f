// The resnet's pairs head (--policy-head pairs) on the CPU in fp32, in one autograd node of the
// board kernels: for each board, the scores S = Q K^T / sqrt(d) of every (from, to) square pair,
// Q and K the [64, d] query and key, and in the backward pass dQ = dS K / sqrt(d) and
// dK = dS^T Q / sqrt(d), each a product of nn/tile_gemm.h on one board in cache. Torch's batched
// matmul and its division took 3.4-4.9 ms a step forward and backward (batch 256, d 32, an
// imitated AVX2 CPU: a tenth of the step) for 200 MFLOP. The same numbers up to rounding; the
// model file does not change.
#pragma once

#include <torch/torch.h>

namespace legalnet::nn {

// Whether board_pair_scores handles `squares`: a contiguous CPU fp32 [B, 64, 2d] with d a
// multiple of 16 (the products' column multiple), autocast off. Otherwise the caller uses
// torch's matmul.
bool board_pair_scores_applies(const torch::Tensor& squares);

// squares [B, 64, 2d]: each square's query (channels 0..d) and key (d..2d). The result is
// [B, 4096], score from * 64 + to = query(from) . key(to) / sqrt(d); differentiable in squares.
torch::Tensor board_pair_scores(const torch::Tensor& squares);

}  // namespace legalnet::nn
