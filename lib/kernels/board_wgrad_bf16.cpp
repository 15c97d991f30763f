#include "kernels/board_wgrad_bf16.h"

#include "kernels/cpu_isa.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace legalnet::nn {
namespace {

constexpr int64_t SQUARES = 64, PADDED = 10;  // an 8x8 board, and with its zero border
constexpr int OUTPUT_BLOCK = 8;               // output channels whose sums stay in registers

float bf16_to_float(uint32_t bits) {
  const uint32_t word = bits << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

// Register block: OUTPUT_BLOCK output channels x (16 * NC) input channels, one tap, summed over
// the segment's board pairs and squares.
template <int NC>
[[gnu::target("avx512f,avx512bf16")]] void block_avx512(const uint32_t* x_pairs, const uint32_t* g_pairs, int64_t pairs,
                                                        int64_t channels, int64_t outputs, int tap, int64_t k0,
                                                        int64_t c0, float* dw) {
  __m512 acc[OUTPUT_BLOCK][NC];
#pragma GCC unroll 8
  for (int j = 0; j < OUTPUT_BLOCK; ++j)
#pragma GCC unroll 2
    for (int v = 0; v < NC; ++v) acc[j][v] = _mm512_setzero_ps();
  const int ty = tap / 3, tx = tap % 3;
  for (int64_t q = 0; q < pairs; ++q)
    for (int y = 0; y < 8; ++y) {
      const uint32_t* xs = x_pairs + ((q * PADDED + y + ty) * PADDED + tx) * channels + c0;
      const uint32_t* gs = g_pairs + (q * SQUARES + y * 8) * outputs + k0;
      for (int x = 0; x < 8; ++x, xs += channels, gs += outputs) {
        __m512bh a[NC];
#pragma GCC unroll 2
        for (int v = 0; v < NC; ++v) a[v] = (__m512bh)_mm512_loadu_si512(xs + 16 * v);
#pragma GCC unroll 8
        for (int j = 0; j < OUTPUT_BLOCK; ++j) {
          const __m512bh b = (__m512bh)_mm512_set1_epi32(int(gs[j]));
#pragma GCC unroll 2
          for (int v = 0; v < NC; ++v) acc[j][v] = _mm512_dpbf16_ps(acc[j][v], a[v], b);
        }
      }
    }
#pragma GCC unroll 8
  for (int j = 0; j < OUTPUT_BLOCK; ++j)
#pragma GCC unroll 2
    for (int v = 0; v < NC; ++v) _mm512_storeu_ps(dw + ((k0 + j) * 9 + tap) * channels + c0 + 16 * v, acc[j][v]);
}

void segment_scalar(const uint32_t* x_pairs, const uint32_t* g_pairs, int64_t pairs, int64_t channels, int64_t outputs,
                    float* dw) {
  for (int64_t k = 0; k < outputs; ++k)
    for (int tap = 0; tap < 9; ++tap)
      for (int64_t c = 0; c < channels; ++c) {
        float sum = 0;
        for (int64_t q = 0; q < pairs; ++q)
          for (int y = 0; y < 8; ++y)
            for (int x = 0; x < 8; ++x) {
              const uint32_t a = x_pairs[((q * PADDED + y + tap / 3) * PADDED + x + tap % 3) * channels + c];
              const uint32_t b = g_pairs[(q * SQUARES + y * 8 + x) * outputs + k];
              sum += bf16_to_float(a & 0xFFFF) * bf16_to_float(b & 0xFFFF) +
                     bf16_to_float(a >> 16) * bf16_to_float(b >> 16);
            }
        dw[(k * 9 + tap) * channels + c] = sum;
      }
}

}  // namespace

bool cpu_has_avx512_bf16() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0 && onednn_allows(CpuFeature::AVX512_BF16);
  }();
  return has;
}

bool cpu_has_amx_bf16() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("amx-bf16") != 0 && onednn_allows(CpuFeature::AMX_BF16);
  }();
  return has;
}

bool has_bf16_weight_gradient() { return board_isa() == BoardIsa::AVX512 && cpu_has_avx512_bf16(); }

bool bf16_wgrad_shapes(int64_t channels, int64_t outputs) {
  return channels > 0 && outputs > 0 && channels % 16 == 0 && outputs % OUTPUT_BLOCK == 0;
}

void interleave_board_pairs(const Bf16WgradProblem& p, int64_t begin, int64_t end, uint32_t* x_pairs,
                            uint32_t* g_pairs) {
  const int64_t c = p.channels, k = p.outputs;
  for (int64_t q = begin; q < end; ++q) {
    const int64_t b0 = 2 * q, b1 = 2 * q + 1;
    const bool second = b1 < p.boards;
    uint32_t* xq = x_pairs + q * PADDED * PADDED * c;
    // The border: rows 0 and 9 whole, columns 0 and 9 of the rows between.
    std::fill(xq, xq + PADDED * c, 0u);
    std::fill(xq + (PADDED - 1) * PADDED * c, xq + PADDED * PADDED * c, 0u);
    for (int64_t row = 1; row < PADDED - 1; ++row) {
      std::fill(xq + row * PADDED * c, xq + (row * PADDED + 1) * c, 0u);
      std::fill(xq + (row * PADDED + PADDED - 1) * c, xq + (row + 1) * PADDED * c, 0u);
    }
    for (int64_t s = 0; s < SQUARES; ++s) {
      const uint16_t* lo = p.x + (b0 * SQUARES + s) * c;
      const uint16_t* hi = second ? p.x + (b1 * SQUARES + s) * c : nullptr;
      uint32_t* out = xq + ((s / 8 + 1) * PADDED + s % 8 + 1) * c;
      for (int64_t i = 0; i < c; ++i) out[i] = uint32_t(lo[i]) | (hi ? uint32_t(hi[i]) << 16 : 0u);
      const uint16_t* glo = p.g + (b0 * SQUARES + s) * k;
      const uint16_t* ghi = second ? p.g + (b1 * SQUARES + s) * k : nullptr;
      uint32_t* gout = g_pairs + (q * SQUARES + s) * k;
      for (int64_t i = 0; i < k; ++i) gout[i] = uint32_t(glo[i]) | (ghi ? uint32_t(ghi[i]) << 16 : 0u);
    }
  }
}

void segment_weight_grad(const Bf16WgradProblem& p, int64_t segment, const uint32_t* x_pairs, const uint32_t* g_pairs,
                         float* dw, bool avx512) {
  const int64_t first = segment * WGRAD_SEGMENT_PAIRS, pairs = std::min(WGRAD_SEGMENT_PAIRS, p.pairs() - first);
  const uint32_t* xs = x_pairs + first * PADDED * PADDED * p.channels;
  const uint32_t* gs = g_pairs + first * SQUARES * p.outputs;
  if (!avx512) return segment_scalar(xs, gs, pairs, p.channels, p.outputs, dw);
  for (int tap = 0; tap < 9; ++tap)
    for (int64_t k0 = 0; k0 < p.outputs; k0 += OUTPUT_BLOCK) {
      int64_t c0 = 0;
      for (; c0 + 32 <= p.channels; c0 += 32) block_avx512<2>(xs, gs, pairs, p.channels, p.outputs, tap, k0, c0, dw);
      if (c0 < p.channels) block_avx512<1>(xs, gs, pairs, p.channels, p.outputs, tap, k0, c0, dw);
    }
}

}  // namespace legalnet::nn
