// The weight gradient of a 3x3 convolution (stride 1, padding 1) over 8x8 boards in bf16, for
// the bf16 training step on a CPU with AVX512-BF16 (kernels.h, board_conv3x3_bf16).
// oneDNN's kernel for it on AVX-512 without AMX (jit_bf16:avx512_core_bf16) ran at ~275 GFLOP/s
// where its forward and data-gradient kernels reach ~420-450 (batch 256, 32 channels, 2 Zen 4
// cores): 12 ms of the default's ~46 ms bf16 step (docs/benchmarks.md, issue 32).
//
// How: vdpbf16ps multiplies pairs of bf16 values and adds both products to one float lane, so
// each lane needs two terms of the same sum next to each other. The sum runs over boards and
// squares; two boards at the same square are such a pair for every tap (two neighbouring squares
// would not be: a shift by one column changes which squares pair up). So the input is rewritten
// with boards in pairs ([B/2][10][10][C][2], zero borders: the padding) and the output gradient
// likewise ([B/2][8][8][K][2]); then for each tap, 8 output channels x 32 input channels of the
// gradient stay in 16 registers while a segment of board pairs streams past from L2. No torch.
#pragma once

#include <cstdint>

namespace legalnet::nn {

// The shapes the kernel takes: channels a multiple of 16, outputs of 8.
bool bf16_wgrad_shapes(int64_t channels, int64_t outputs);

// Board pairs per segment: a segment's inputs (~170 KB at 32 channels) stay in L2 while every
// tap and output block reads them; segments are summed in order, so the result does not depend
// on how many threads share them.
constexpr int64_t WGRAD_SEGMENT_PAIRS = 8;

struct Bf16WgradProblem {
  const uint16_t* x;  // [B,8,8,C] bf16 bits (channels-last), the convolution's input
  const uint16_t* g;  // [B,8,8,K] bf16 bits (channels-last), the gradient of its output
  int64_t boards, channels, outputs;
  int64_t pairs() const { return (boards + 1) / 2; }
  int64_t segments() const { return (pairs() + WGRAD_SEGMENT_PAIRS - 1) / WGRAD_SEGMENT_PAIRS; }
  // The interleaved copies' sizes in 32-bit words (two bf16 each).
  int64_t x_pairs_words() const { return pairs() * 100 * channels; }
  int64_t g_pairs_words() const { return pairs() * 64 * outputs; }
  int64_t weight_floats() const { return outputs * 9 * channels; }
};

// Writes board pairs [begin, end) of x and g interleaved (x_pairs [pairs][10][10][C], g_pairs
// [pairs][8][8][K], uint32 words holding board 2p in the low half and 2p+1 in the high half; a
// missing last board is zeros), the layout segment_weight_grad reads.
void interleave_board_pairs(const Bf16WgradProblem& p, int64_t begin, int64_t end, uint32_t* x_pairs,
                            uint32_t* g_pairs);

// The gradient of segment s into dw [K][3][3][C] floats (overwritten): sum over its boards and
// squares of g[b, y, x, k] * x[b, y + ty - 1, x + tx - 1, c]. With avx512 (the CPU must have
// AVX512-BF16) by vdpbf16ps, else by a scalar loop of the same sums (the tests' reference
// layout check on any CPU); both accumulate in float.
void segment_weight_grad(const Bf16WgradProblem& p, int64_t segment, const uint32_t* x_pairs, const uint32_t* g_pairs,
                         float* dw, bool avx512);

}  // namespace legalnet::nn
