// The CPU kernels for 8x8 boards (train and evaluate --kernels board), behind this one header:
// the resnet's 3x3 convolutions (Winograd F(4x4,3x3) in fp32; the weight gradient in bf16 on
// AVX512-BF16), its batch norm + residual + ReLU, the pairs head's scores, the move logits at
// inference, the ray scan of --mixing rays, and the training loss's per-row BCE. Each is one
// autograd node (or a plain loop) giving torch's numbers up to rounding, with the weights in
// torch's layouts: the model file does not change. What runs them, and when, is
// compute/arithmetic.h's policy. Code outside kernels/ includes this header only; its two
// torch-free parts (cpu_isa.h, bce_rows.h) serve the torch-free sources beside it. Figures:
// docs/results.md and docs/benchmarks.md.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/bce_rows.h"
#include "kernels/cpu_isa.h"

namespace legalnet::nn {

// ---- 3x3 convolutions --------------------------------------------------------------------

// Output tile size: 4 (F(4x4,3x3), the default: fewer multiplications and 2.25x the input's
// memory where F(2x2) takes 4x) or 2 (exact up to rounding like the direct convolution).
enum class WinogradTile { F2 = 2, F4 = 4 };

// Whether board_conv3x3 handles these: a CPU fp32 tensor [B,C,8,8] and a [K,C,3,3] weight,
// with autocast off. Otherwise the caller runs torch::conv2d.
bool board_conv_applies(const torch::Tensor& x, const torch::Tensor& weight);

// conv2d(x, weight, no bias, stride 1, padding 1) for x [B,C,8,8], weight [K,C,3,3]: the
// result is [B,K,8,8] in channels-last layout; differentiable in x and weight. An 8x8 board is 4
// tiles of 6x6 and 36 multiplications per tile and channel pair, where the direct convolution
// does 576 per board; a block of 4 boards goes through the transforms and the small products
// (tile_gemm.h) while it is in cache.
torch::Tensor board_conv3x3(const torch::Tensor& x, const torch::Tensor& weight, WinogradTile tile = WinogradTile::F4);

// In bf16 the board kernels take the weight gradient only (board_wgrad_bf16.h: oneDNN's was the
// one slow bf16 kernel of the step); forward and input gradient stay torch's.
// Whether board_conv3x3_bf16 handles these: a CPU bf16 x [B,C,8,8] with C a multiple of 16, a
// [K,C,3,3] weight with K a multiple of 8 that needs its gradient (inference is torch's alone),
// on a CPU with AVX512-BF16 (not capped below AVX-512).
bool board_conv_bf16_applies(const torch::Tensor& x, const torch::Tensor& weight);
// conv2d(x, weight in bf16, no bias, stride 1, padding 1); differentiable in x and weight (the
// weight's gradient reaches it through the cast to bf16).
torch::Tensor board_conv3x3_bf16(const torch::Tensor& x, const torch::Tensor& weight);

// ---- batch norm + residual + ReLU ---------------------------------------------------------

// relu(batch_norm(x) [+ residual]) over channels-last fp32 boards, in one node where torch runs
// three to five (each with its own pass over the batch, forward and backward). In training mode
// the module's parameters and running statistics are used and updated exactly as
// torch::nn::BatchNorm2d does; in evaluation mode (inference: no gradient) the running
// statistics fold into a scale and shift per channel, one pass.
// Whether board_norm_relu handles these: a CPU fp32 tensor [B,C,H,W] in channels-last layout,
// a BatchNorm2d with its affine parameters and running statistics, in training mode, or in
// evaluation mode with gradients off; autocast off. Otherwise the caller runs the module and
// torch's relu.
bool board_norm_applies(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& norm);
// relu(norm(x) + residual) (residual may be undefined: relu(norm(x))). In training mode
// differentiable in x, residual and the norm's weight and bias, and it updates the running
// statistics and the batch count; in evaluation mode it reads them only.
torch::Tensor board_norm_relu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& norm,
                              const torch::Tensor& residual = {});

// ---- the pairs head's scores --------------------------------------------------------------

// For each board S = Q K^T / sqrt(d) of every (from, to) square pair, Q and K the [64, d] query
// and key, and in the backward pass dQ = dS K / sqrt(d) and dK = dS^T Q / sqrt(d): each a
// product on one board in cache, where torch's batched matmul streams them.
// Whether board_pair_scores handles `squares`: a contiguous CPU fp32 [B, 64, 2d] with d a
// multiple of 16 (the products' column multiple), autocast off. Otherwise the caller uses
// torch's matmul.
bool board_pair_scores_applies(const torch::Tensor& squares);
// squares [B, 64, 2d]: each square's query (channels 0..d) and key (d..2d). The result is
// [B, 4096], score from * 64 + to = query(from) . key(to) / sqrt(d); differentiable in squares.
torch::Tensor board_pair_scores(const torch::Tensor& squares);

// ---- the resnet's move logits at inference ---------------------------------------------------

// What the resnet's head composes each trained move's logit from (ResNetImpl: the move-type
// scores, the pairs head's, and the paths' and the vetoes' costs), for a batch of B boards.
struct MoveLogitParts {
  torch::Tensor scores, columns;   // [B, N]; int64 [K]: trained move j reads scores[:, columns[j]]
  torch::Tensor pairs = {};        // [B, 4096] at from * 64 + to, or undefined
  torch::Tensor path_values = {};  // [B, 64] before the softplus, or undefined
  torch::Tensor veto_values = {};  // [B, V]: the vetoes' convolution flattened [channel][square], or undefined
};
// The head's fixed tables: the K trained moves' indices; for move j the squares strictly between
// its from- and to-square, between_squares[between_offsets[j] .. between_offsets[j + 1]); where
// veto k of move j reads its from- and to-value in veto_values, at k * K + j; the logit of the
// 4096 - K indices that are never a move.
struct MoveLogitTables {
  std::vector<int64_t> moves;
  std::vector<int32_t> between_offsets, between_squares;
  std::vector<int64_t> veto_from, veto_to;
  float off_logit = 0;
};
// Whether board_move_logits handles these: CPU fp32 parts, contiguous, of one batch, none
// needing a gradient (it is inference's alone), autocast off. Otherwise the caller composes
// them with torch's ops.
bool board_move_logits_applies(const MoveLogitParts& parts);
// The logits [B, 4096]: for trained move j at index moves[j], scores[columns[j]] + (pairs[index]
// - (the sum of softplus(path_values) over its between squares + the sum over its vetoes of
// softplus(from-value + to-value))), and off_logit elsewhere; torch's numbers up to rounding, in
// one pass a board where torch's ops make a dozen over the batch. Throws c10::Error for tables
// that do not fit the parts.
torch::Tensor board_move_logits(const MoveLogitParts& parts, const MoveLogitTables& tables);

// ---- the ray scan (resnet --mixing rays) -----------------------------------------------------

// The 8 directions of a ray scan, as (rank step, file step); the order of h's direction axis.
inline constexpr std::array<std::array<int, 2>, 8> RAY_DIRECTIONS{
    {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}}};
// The square `steps` squares from `square` (rank * 8 + file) along direction d (negative: back),
// or -1 off the board: the walks of the kernel and the gathers of torch's scan read it.
inline int ray_square(int square, size_t d, int steps) {
  const int rank = square / 8 + steps * RAY_DIRECTIONS[d][0], file = square % 8 + steps * RAY_DIRECTIONS[d][1];
  return rank >= 0 && rank < 8 && file >= 0 && file < 8 ? rank * 8 + file : -1;
}

// x + mix(x), the whole layer of --mixing rays (nn/mixing.cpp: RayScan) over squares x
// [B, 64, C] (square = rank * 8 + file), in one node: the projection p = x W_p^T + b_p [B, 64, 2R]
// gives each square's values v (channels 0..R) and gate logits (R..2R), g = sigmoid(logit); for
// each board, square s, direction d and channel, h[s][d] = sum over k >= 1 of v[s - k d] *
// g[s - d] * ... * g[s - (k-1) d], the board's edge stopping the sum: what reaches s moving along
// d, each square passing on what reaches it times its gate (a blocker is a gate near 0); and
// mix(x) = h W_o^T with h [B, 64, 8R]. Weights in torch's Linear layouts: W_p [2R, C], b_p [2R],
// W_o [C, 8R]. The result is [B, 64, C], differentiable in x and the three weights. One walk along
// each ray, forward and backward, with the products, the sigmoid and the add around it on one
// board in cache, where torch's ops need five passes over the batch and log2(8) doubling steps of
// gathers.
// Whether board_ray_layer handles these: all CPU fp32 and contiguous, C a multiple of 16 (the
// products' column multiple), R 8, 16 or 32, autocast off. Otherwise the caller runs torch's ops.
bool board_ray_layer_applies(const torch::Tensor& squares, const torch::Tensor& project_weight,
                             const torch::Tensor& project_bias, const torch::Tensor& out_weight);
torch::Tensor board_ray_layer(const torch::Tensor& squares, const torch::Tensor& project_weight,
                              const torch::Tensor& project_bias, const torch::Tensor& out_weight);

// ---- the training loss's rows: bce_rows.h (BceRow, bce_row) -------------------------------

}  // namespace legalnet::nn
