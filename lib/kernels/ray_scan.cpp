#include "kernels/kernels.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace legalnet::nn {

namespace {

constexpr int RAY_SQUARES = 64;

// One direction's walk: the squares in an order where each comes after its predecessor (the
// square one step back along the direction), and each square's predecessor and successor (-1
// off the board).
struct RayWalk {
  std::array<int, RAY_SQUARES> order{}, predecessor{}, successor{};
};

const std::array<RayWalk, RAY_DIRECTIONS.size()>& ray_walks() {
  static const auto walks = [] {
    std::array<RayWalk, RAY_DIRECTIONS.size()> w{};
    for (size_t d = 0; d < RAY_DIRECTIONS.size(); ++d) {
      const auto [dr, df] = RAY_DIRECTIONS[d];
      for (int s = 0; s < RAY_SQUARES; ++s) {
        w[d].order[size_t(s)] = s;
        w[d].predecessor[size_t(s)] = ray_square(s, d, -1);
        w[d].successor[size_t(s)] = ray_square(s, d, 1);
      }
      // Along the direction, a square's predecessor projects lower: sort by the projection.
      std::stable_sort(w[d].order.begin(), w[d].order.end(),
                       [&](int a, int b) { return dr * (a / 8) + df * (a % 8) < dr * (b / 8) + df * (b % 8); });
    }
    return w;
  }();
  return walks;
}

// The loops over one board's R channels, compiled for AVX2 and for the baseline; never AVX-512,
// so that ONEDNN_MAX_CPU_ISA=AVX2 imitates an AVX2-only CPU here as well. Where R is a template
// constant (a multiple of 8) the channels go 8 at a time as one vector (a value read, then
// written: the rows of h a step reads and writes are different, which the compiler cannot know,
// so it would not vectorize the plain loop); R = 0 reads the width from `width`, one at a time.
#define RAY_KERNEL __attribute__((target_clones("avx2", "default")))
constexpr int LANES = 8;
using Lanes = float __attribute__((vector_size(LANES * sizeof(float))));
[[gnu::always_inline]] inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, Lanes v) { std::memcpy(p, &v, sizeof v); }

// h [64][8][R] of one board from its values (row stride `stride`) and gates [64][R]:
// h[s][d] = v[p] + g[p] * h[p][d], p the predecessor of s along d, and 0 where s has none.
template <int R>
RAY_KERNEL void scan_board(const float* __restrict v, int64_t stride, const float* __restrict g, float* __restrict h,
                           int64_t width) {
  const int64_t r = R > 0 ? R : width, row = int64_t(RAY_DIRECTIONS.size()) * r;
  const auto& walks = ray_walks();
  for (size_t d = 0; d < walks.size(); ++d)
    for (const int s : walks[d].order) {
      float* __restrict out = h + s * row + int64_t(d) * r;
      const int p = walks[d].predecessor[size_t(s)];
      if (p < 0) {
        for (int64_t c = 0; c < r; ++c) out[c] = 0.0f;
        continue;
      }
      const float *vp = v + p * stride, *gp = g + p * r, *hp = h + p * row + int64_t(d) * r;
      if constexpr (R > 0) {
        for (int c = 0; c < R; c += LANES) store(out + c, load(vp + c) + load(gp + c) * load(hp + c));
      } else {
        for (int64_t c = 0; c < r; ++c) out[c] = vp[c] + gp[c] * hp[c];
      }
    }
}

// The backward walk of one board: with a[s][d] the whole gradient of h[s][d] (its own plus what
// reaches it through its successor q: a[s] = dh[s] + g[s] a[q]), dv[s] = sum_d a[q] and
// dg[s] = sum_d a[q] h[s]. dv, dg and `a` (one direction's) are [64][R].
template <int R>
RAY_KERNEL void scan_board_backward(const float* __restrict g, const float* __restrict h, const float* __restrict dh,
                                    float* __restrict dv, float* __restrict dg, float* __restrict a, int64_t width) {
  const int64_t r = R > 0 ? R : width, row = int64_t(RAY_DIRECTIONS.size()) * r;
  for (int64_t i = 0; i < RAY_SQUARES * r; ++i) dv[i] = dg[i] = 0.0f;
  const auto& walks = ray_walks();
  for (size_t d = 0; d < walks.size(); ++d)
    for (auto it = walks[d].order.rbegin(); it != walks[d].order.rend(); ++it) {
      const int s = *it, q = walks[d].successor[size_t(s)];
      const float* dhs = dh + s * row + int64_t(d) * r;
      float* as = a + s * r;
      if (q < 0) {
        for (int64_t c = 0; c < r; ++c) as[c] = dhs[c];
        continue;
      }
      const float *aq = a + q * r, *gs = g + s * r, *hs = h + s * row + int64_t(d) * r;
      float *dvs = dv + s * r, *dgs = dg + s * r;
      if constexpr (R > 0) {
        for (int c = 0; c < R; c += LANES) {
          const Lanes next = load(aq + c);
          store(as + c, load(dhs + c) + load(gs + c) * next);
          store(dvs + c, load(dvs + c) + next);
          store(dgs + c, load(dgs + c) + next * load(hs + c));
        }
      } else {
        for (int64_t c = 0; c < r; ++c) {
          as[c] = dhs[c] + gs[c] * aq[c];
          dvs[c] += aq[c];
          dgs[c] += aq[c] * hs[c];
        }
      }
    }
}

// One board's gates [64][R]: the sigmoid of the gate logits, columns R..2R of `projected`.
void board_gates(const float* projected, int64_t r, float* g) {
  for (int64_t s = 0; s < RAY_SQUARES; ++s)
    for (int64_t c = 0; c < r; ++c) g[s * r + c] = 1.0f / (1.0f + std::exp(-projected[s * 2 * r + r + c]));
}

// The widths with a kernel of their own (nn::ray_scan_width of the usual sizes: 32 channels'
// 8); any other runs the generic one.
template <typename Kernel>
void by_width(int64_t r, Kernel&& kernel) {
  switch (r) {
    case 8: return kernel(std::integral_constant<int, 8>{});
    case 16: return kernel(std::integral_constant<int, 16>{});
    case 32: return kernel(std::integral_constant<int, 32>{});
    default: return kernel(std::integral_constant<int, 0>{});
  }
}

// The scan with the gates' sigmoid inside: one node over the projection, where torch would run
// two slices, a sigmoid and their backward passes besides.
struct RayScanFunction : torch::autograd::Function<RayScanFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& projected) {
    const int64_t boards = projected.size(0), r = projected.size(2) / 2, directions = int64_t(RAY_DIRECTIONS.size());
    auto h = torch::empty({boards, RAY_SQUARES, directions, r});
    const float* in = projected.data_ptr<float>();
    float* out = h.data_ptr<float>();
    by_width(r, [&](auto width) {
      at::parallel_for(0, boards, 16, [&](int64_t first, int64_t last) {
        std::vector<float> g(size_t(RAY_SQUARES * r));
        for (int64_t n = first; n < last; ++n) {
          const float* board = in + n * RAY_SQUARES * 2 * r;
          board_gates(board, r, g.data());
          scan_board<width()>(board, 2 * r, g.data(), out + n * RAY_SQUARES * directions * r, r);
        }
      });
    });
    ctx->save_for_backward({projected, h});
    return h;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &projected = saved[0], &h = saved[1];
    const auto dh = grads[0].contiguous();
    const int64_t boards = projected.size(0), r = projected.size(2) / 2, directions = int64_t(RAY_DIRECTIONS.size());
    auto grad = torch::empty_like(projected);
    const float *in = projected.data_ptr<float>(), *hs = h.data_ptr<float>(), *dhs = dh.data_ptr<float>();
    float* out = grad.data_ptr<float>();
    by_width(r, [&](auto width) {
      at::parallel_for(0, boards, 16, [&](int64_t first, int64_t last) {
        std::vector<float> g(size_t(RAY_SQUARES * r)), dv(g.size()), dg(g.size()), a(g.size());
        for (int64_t n = first; n < last; ++n) {
          const int64_t board = n * RAY_SQUARES * 2 * r, board_h = n * RAY_SQUARES * directions * r;
          board_gates(in + board, r, g.data());
          scan_board_backward<width()>(g.data(), hs + board_h, dhs + board_h, dv.data(), dg.data(), a.data(), r);
          // Values' gradients as they are, the gate logits' through the sigmoid: g (1 - g).
          for (int64_t s = 0; s < RAY_SQUARES; ++s)
            for (int64_t c = 0; c < r; ++c) {
              const int64_t i = s * r + c;
              out[board + s * 2 * r + c] = dv[size_t(i)];
              out[board + s * 2 * r + r + c] = dg[size_t(i)] * g[size_t(i)] * (1.0f - g[size_t(i)]);
            }
        }
      });
    });
    return {grad};
  }
};

}  // namespace

bool board_ray_scan_applies(const torch::Tensor& projected) {
  // No autocast condition: the scan runs no op autocast would lower (its products are its own
  // loops), and it takes fp32 only.
  return projected.device().is_cpu() && projected.scalar_type() == torch::kFloat && projected.dim() == 3 &&
         projected.size(1) == RAY_SQUARES && projected.size(2) > 0 && projected.size(2) % 2 == 0 &&
         projected.is_contiguous();
}

torch::Tensor board_ray_scan(const torch::Tensor& projected) {
  TORCH_CHECK(board_ray_scan_applies(projected), "board_ray_scan: expected a contiguous CPU fp32 [B, 64, 2R], got ",
              projected.sizes());
  return RayScanFunction::apply(projected);
}

}  // namespace legalnet::nn
