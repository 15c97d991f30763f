#include "kernels/bce_rows.h"

#include <cstring>

namespace legalnet::nn {

namespace {

constexpr int MAX_LANES = 16;

// Vectors of N floats and N int32 (GCC's vector extensions, as kernels/tile_gemm.cpp): compiled to
// AVX-512, AVX2 or SSE by the target of the function they are inlined into.
template <int N>
struct Lanes {
  typedef float F __attribute__((vector_size(N * sizeof(float))));
  typedef int32_t I __attribute__((vector_size(N * sizeof(int32_t))));
};

// exp(x) for x in [-87, 0]: x = n ln2 + r with |r| <= ln2 / 2, e^r by Cephes' expf polynomial
// (2e-7 relative), 2^n built in the exponent bits (n in [-126, 0]: always a normal float).
// (Vectors pass by reference: by value, GCC warns that the ABI of a vector argument differs
// between the functions' targets, although everything here is inlined.)
template <int N>
[[gnu::always_inline]] inline void exp_nonpositive(const typename Lanes<N>::F& x, typename Lanes<N>::F* e) {
  using F = typename Lanes<N>::F;
  using I = typename Lanes<N>::I;
  const F y = x * 1.44269504088896341f - 0.5f;  // x / ln2, rounded below by truncation (x <= 0)
  const I n = __builtin_convertvector(y, I);
  const F nf = __builtin_convertvector(n, F);
  const F r = x - nf * 0.693359375f - nf * -2.12194440e-4f;
  F p = F{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const I scale_bits = (n + 127) << 23;
  F scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  *e = p * scale;
}

// Loss and gradient of N logits: softplus(z) - t z = max(z, 0) - t z + log1p(e), e = exp(-|z|),
// log1p(e) = 2 atanh(s) with s = e / (2 + e) <= 1/3 (its odd series to s^15: 1e-8 relative);
// sigmoid(z) = 1 / (1 + e) for z >= 0, e / (1 + e) below.
template <int N>
[[gnu::always_inline]] inline void bce_lanes(const typename Lanes<N>::F& z, const typename Lanes<N>::F& t,
                                             typename Lanes<N>::F* loss, typename Lanes<N>::F* gradient) {
  using F = typename Lanes<N>::F;
  using I = typename Lanes<N>::I;
  const F zero = F{} + 0.0f;
  const F a = z < zero ? -z : z;  // NaN stays NaN and is caught below
  F e;
  exp_nonpositive<N>(a < 87.0f ? -a : zero - 87.0f, &e);
  const F q = 1.0f / (1.0f + e);
  const F s = e / (2.0f + e);
  const F s2 = s * s;
  F series = F{} + 1.0f / 15;
  series = series * s2 + 1.0f / 13;
  series = series * s2 + 1.0f / 11;
  series = series * s2 + 1.0f / 9;
  series = series * s2 + 1.0f / 7;
  series = series * s2 + 1.0f / 5;
  series = series * s2 + 1.0f / 3;
  series = series * s2 + 1.0f;
  const F log1p_e = 2.0f * s * series;
  const I non_negative = z >= zero;
  *gradient = (non_negative ? q : e * q) - t;
  // z - z: 0 for a finite logit, NaN for an infinite or NaN one.
  *loss = (non_negative ? z : zero) - t * z + log1p_e + (z - z);
}

template <int N>
[[gnu::always_inline]] inline double bce_block(const float* z, const float* t, int64_t k, float* gradient) {
  using F = typename Lanes<N>::F;
  double sum = 0;
  F partial = F{};
  for (int64_t i = 0; i < k; i += N) {
    F zv, tv, loss, g;
    std::memcpy(&zv, z + i, sizeof zv);
    std::memcpy(&tv, t + i, sizeof tv);
    bce_lanes<N>(zv, tv, &loss, &g);
    partial += loss;
    if (gradient) {
      if (i + N <= k) {
        std::memcpy(gradient + i, &g, sizeof g);
      } else {  // the last, partial vector
        float tail[N];
        std::memcpy(tail, &g, sizeof g);
        std::memcpy(gradient + i, tail, sizeof(float) * size_t(k - i));
      }
    }
    if ((i / N) % 16 == 15 || i + N >= k) {  // into double every 16 vectors and at the end
      for (int l = 0; l < N; ++l) sum += double(partial[l]);
      partial = F{};
    }
  }
  return sum;
}

[[gnu::target("avx512f")]] double bce_avx512(const float* z, const float* t, int64_t k, float* gradient) {
  return bce_block<16>(z, t, k, gradient);
}
[[gnu::target("avx2,fma")]] double bce_avx2(const float* z, const float* t, int64_t k, float* gradient) {
  return bce_block<8>(z, t, k, gradient);
}
double bce_sse(const float* z, const float* t, int64_t k, float* gradient) { return bce_block<4>(z, t, k, gradient); }

}  // namespace

int64_t bce_row_work(int64_t k) { return 2 * ((k + MAX_LANES - 1) / MAX_LANES * MAX_LANES); }

double bce_row(BoardIsa isa, const BceRow& row, float* work, float* gradient) {
  const int64_t padded = bce_row_work(row.k) / 2;
  float* z = work;
  float* t = work + padded;
  if (row.bf16) {
    const auto* bits = static_cast<const uint16_t*>(row.scores);
    for (int64_t i = 0; i < row.k; ++i) {
      const uint32_t wide = uint32_t(bits[row.columns[i]]) << 16;
      std::memcpy(z + i, &wide, sizeof wide);
    }
  } else {
    const auto* values = static_cast<const float*>(row.scores);
    for (int64_t i = 0; i < row.k; ++i) z[i] = values[row.columns[i]];
  }
  for (int64_t i = 0; i < row.k; ++i) t[i] = row.targets[row.target_columns[i]];
  if (row.margin != 0)
    for (int64_t i = 0; i < row.k; ++i) z[i] -= row.margin * (2 * t[i] - 1);
  // The tail up to a whole vector: logits so negative that they add 1e-38 each, targets 0.
  for (int64_t i = row.k; i < padded; ++i) {
    z[i] = -1e30f;
    t[i] = 0;
  }
  switch (isa) {
    case BoardIsa::AVX512: return bce_avx512(z, t, row.k, gradient);
    case BoardIsa::AVX2: return bce_avx2(z, t, row.k, gradient);
    case BoardIsa::BASELINE: break;
  }
  return bce_sse(z, t, row.k, gradient);
}

}  // namespace legalnet::nn
