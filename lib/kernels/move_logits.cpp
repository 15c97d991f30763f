#include "kernels/kernels.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

// The vector helpers are always inlined: the ABI of passing vectors does not matter to them.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace legalnet::nn {

namespace {

constexpr int64_t LOGIT_SQUARES = 64, LOGIT_INDICES = LOGIT_SQUARES * LOGIT_SQUARES;

// softplus(x) = max(x, 0) + log1p(exp(-|x|)): torch's softplus up to rounding (above its
// threshold of 20 torch returns x, which differs by less than exp(-20) = 2e-9).
float softplus(float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::abs(x))); }

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace softplus_avx2 {

// exp(x) for x <= 0: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, Cody and Waite), e^r by
// its Taylor series to r^7 (the next term is below 5e-9 of it), 2^n written into the exponent;
// below -87 (2^n no longer a normal float) it is that of -87, which softplus adds as 1.6e-38.
inline __m256 exp_nonpositive(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  for (const float c : {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f})
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
  const __m256i scale = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(scale));
}

// log(1 + t) for t in [0, 1]: u = 1 + t, halved above sqrt(2) (then plus ln2), and log(u) =
// 2 atanh(s) with s = (u - 1) / (u + 1), |s| <= 0.172, by its series to s^11 (the next term is
// below 4e-10 of it). A t below float's epsilon leaves u at 1 and adds nothing: at most 6e-8.
inline __m256 log1p_unit(__m256 t) {
  __m256 u = _mm256_add_ps(_mm256_set1_ps(1.0f), t);
  const __m256 high = _mm256_cmp_ps(u, _mm256_set1_ps(1.41421356237f), _CMP_GT_OQ);
  u = _mm256_blendv_ps(u, _mm256_mul_ps(u, _mm256_set1_ps(0.5f)), high);
  const __m256 s = _mm256_div_ps(_mm256_sub_ps(u, _mm256_set1_ps(1.0f)), _mm256_add_ps(u, _mm256_set1_ps(1.0f)));
  const __m256 s2 = _mm256_mul_ps(s, s);
  __m256 p = _mm256_set1_ps(2.0f / 11);
  for (const float c : {2.0f / 9, 2.0f / 7, 2.0f / 5, 2.0f / 3, 2.0f}) p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(c));
  return _mm256_fmadd_ps(p, s, _mm256_and_ps(high, _mm256_set1_ps(0.693147180559945f)));
}

// x = softplus(x) for each x of v.
void softplus_all(std::span<float> v) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  size_t i = 0;
  for (; i + 8 <= v.size(); i += 8) {
    const __m256 x = _mm256_loadu_ps(&v[i]);
    const __m256 t = exp_nonpositive(_mm256_or_ps(x, sign));  // exp(-|x|)
    _mm256_storeu_ps(&v[i], _mm256_add_ps(_mm256_max_ps(x, _mm256_setzero_ps()), log1p_unit(t)));
  }
  for (; i < v.size(); ++i) v[i] = softplus(v[i]);
}

}  // namespace softplus_avx2
#pragma GCC pop_options

void softplus_all(BoardIsa isa, std::span<float> v) {
  if (isa >= BoardIsa::AVX2) return softplus_avx2::softplus_all(v);
  for (float& x : v) x = softplus(x);
}

// Whether every index of the tables lies inside what it indexes.
bool tables_fit(const MoveLogitParts& parts, const MoveLogitTables& tables) {
  const auto within = [](const auto& list, int64_t size) {
    return std::all_of(list.begin(), list.end(), [size](auto i) { return i >= 0 && int64_t(i) < size; });
  };
  const int64_t* columns = parts.columns.data_ptr<int64_t>();
  const int64_t veto_width = parts.veto_values.defined() ? parts.veto_values.size(1) : 0;
  return within(tables.moves, LOGIT_INDICES) && within(tables.between_squares, LOGIT_SQUARES) &&
         std::all_of(columns, columns + parts.columns.numel(),
                     [&](int64_t c) { return c >= 0 && c < parts.scores.size(1); }) &&
         (!parts.veto_values.defined() ||
          (within(tables.veto_from, veto_width) && within(tables.veto_to, veto_width))) &&
         std::is_sorted(tables.between_offsets.begin(), tables.between_offsets.end()) &&
         (tables.between_offsets.empty() || (tables.between_offsets.front() == 0 &&
                                             size_t(tables.between_offsets.back()) == tables.between_squares.size()));
}

const float* board_of(const torch::Tensor& t, int64_t n) {
  return t.defined() ? t.data_ptr<float>() + n * t.size(1) : nullptr;
}

}  // namespace

bool board_move_logits_applies(const MoveLogitParts& parts) {
  const auto fits = [&](const torch::Tensor& t, int64_t width) {
    return !t.defined() ||
           (t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 2 &&
            t.size(0) == parts.scores.size(0) && t.size(1) == width && t.is_contiguous() && !t.requires_grad());
  };
  return parts.scores.defined() && parts.columns.defined() && parts.columns.device().is_cpu() &&
         parts.columns.scalar_type() == torch::kLong && parts.columns.is_contiguous() &&
         !at::autocast::is_autocast_enabled(torch::kCPU) &&
         fits(parts.scores, parts.scores.defined() ? parts.scores.size(1) : 0) && fits(parts.pairs, LOGIT_INDICES) &&
         fits(parts.path_values, LOGIT_SQUARES) &&
         fits(parts.veto_values, parts.veto_values.defined() ? parts.veto_values.size(1) : 0);
}

torch::Tensor board_move_logits(const MoveLogitParts& parts, const MoveLogitTables& tables) {
  TORCH_CHECK(board_move_logits_applies(parts), "board_move_logits: expected contiguous CPU fp32 [B, N] parts ",
              "without gradients");
  const int64_t boards = parts.scores.size(0), moves = int64_t(tables.moves.size());
  const int64_t vetoes = moves == 0 ? 0 : int64_t(tables.veto_from.size()) / moves;
  TORCH_CHECK(parts.columns.numel() == moves && tables.between_offsets.size() == tables.moves.size() + 1 &&
                  tables.veto_to.size() == tables.veto_from.size() && tables.veto_from.size() == size_t(vetoes * moves),
              "board_move_logits: tables of different lengths");
  TORCH_CHECK(!parts.veto_values.defined() || vetoes > 0, "board_move_logits: veto values without veto tables");
  TORCH_CHECK(tables_fit(parts, tables), "board_move_logits: an index of the tables lies outside the parts");
  auto logits = torch::full({boards, LOGIT_INDICES}, tables.off_logit);
  float* out = logits.data_ptr<float>();
  const int64_t* columns = parts.columns.data_ptr<int64_t>();
  const BoardIsa isa = board_isa();
  at::parallel_for(0, boards, 8, [&](int64_t first, int64_t last) {
    std::vector<float> blocking(LOGIT_SQUARES), veto(size_t(vetoes * moves));
    for (int64_t n = first; n < last; ++n) {
      const float *scores = board_of(parts.scores, n), *pairs = board_of(parts.pairs, n);
      const float *path = board_of(parts.path_values, n), *values = board_of(parts.veto_values, n);
      if (path) {
        std::copy(path, path + LOGIT_SQUARES, blocking.begin());
        softplus_all(isa, blocking);
      }
      if (values) {
        for (size_t i = 0; i < veto.size(); ++i) veto[i] = values[tables.veto_from[i]] + values[tables.veto_to[i]];
        softplus_all(isa, veto);
      }
      float* board = out + n * LOGIT_INDICES;
      for (int64_t j = 0; j < moves; ++j) {
        const int64_t index = tables.moves[size_t(j)];
        float cost = 0;
        if (path)
          for (int32_t k = tables.between_offsets[size_t(j)]; k < tables.between_offsets[size_t(j) + 1]; ++k)
            cost += blocking[size_t(tables.between_squares[size_t(k)])];
        if (values)
          for (int64_t k = 0; k < vetoes; ++k) cost += veto[size_t(k * moves + j)];
        const float extra = pairs ? pairs[index] - cost : -cost;
        board[index] = scores[columns[j]] + extra;
      }
    }
  });
  return logits;
}

}  // namespace legalnet::nn
