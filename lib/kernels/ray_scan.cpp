#include "kernels/kernels.h"

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/over_chunks.h"
#include "kernels/tile_gemm.h"

namespace legalnet::nn {

namespace {

constexpr int RAY_SQUARES = 64;
constexpr int RAY_COUNT = int(RAY_DIRECTIONS.size());

// One direction's walk: the squares in an order where each comes after its predecessor (the
// square one step back along the direction), and each square's predecessor and successor (-1
// off the board).
struct RayWalk {
  std::array<int, RAY_SQUARES> order{}, predecessor{}, successor{};
};

const std::array<RayWalk, RAY_COUNT>& ray_walks() {
  static const auto walks = [] {
    std::array<RayWalk, RAY_COUNT> w{};
    for (size_t d = 0; d < w.size(); ++d) {
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

// The walks over one board's R channels (R a multiple of 8: one vector of 8 at a time), compiled
// for AVX2 and for the baseline; never AVX-512, so that ONEDNN_MAX_CPU_ISA=AVX2 imitates an
// AVX2-only CPU here as well. A value is read, then written: the rows of h a step reads and writes
// are different, which the compiler cannot know, so it would not vectorize the plain loop.
#define RAY_KERNEL __attribute__((target_clones("avx2", "default")))
constexpr int LANES = 8;
using Lanes = float __attribute__((vector_size(LANES * sizeof(float))));
[[gnu::always_inline]] inline Lanes load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, Lanes v) { std::memcpy(p, &v, sizeof v); }

// h [64][8][R] of one board from its values v and gates g, vg [64][2R] (each square's v, then g):
// h[s][d] = v[p] + g[p] * h[p][d], p the predecessor of s along d, and 0 where s has none.
template <int R>
RAY_KERNEL void scan_board(const float* __restrict vg, float* __restrict h) {
  constexpr int64_t row = RAY_COUNT * R, stride = 2 * R;
  const auto& walks = ray_walks();
  for (size_t d = 0; d < walks.size(); ++d)
    for (const int s : walks[d].order) {
      float* __restrict out = h + s * row + int64_t(d) * R;
      const int p = walks[d].predecessor[size_t(s)];
      if (p < 0) {
        for (int c = 0; c < R; ++c) out[c] = 0.0f;
        continue;
      }
      const float *vp = vg + p * stride, *gp = vp + R, *hp = h + p * row + int64_t(d) * R;
      for (int c = 0; c < R; c += LANES) store(out + c, load(vp + c) + load(gp + c) * load(hp + c));
    }
}

// The backward walk of one board: with a[s][d] the whole gradient of h[s][d] (its own plus what
// reaches it through its successor q: a[s] = dh[s] + g[s] a[q]), dv[s] = sum_d a[q] and
// dg[s] = sum_d a[q] h[s], written as dvg [64][2R] in vg's layout (each square's dv, then dg);
// `a` (one direction's) is [64][R].
template <int R>
RAY_KERNEL void scan_board_backward(const float* __restrict vg, const float* __restrict h, const float* __restrict dh,
                                    float* __restrict dvg, float* __restrict a) {
  constexpr int64_t row = RAY_COUNT * R, stride = 2 * R;
  std::fill(dvg, dvg + RAY_SQUARES * stride, 0.0f);
  const auto& walks = ray_walks();
  for (size_t d = 0; d < walks.size(); ++d)
    for (auto it = walks[d].order.rbegin(); it != walks[d].order.rend(); ++it) {
      const int s = *it, q = walks[d].successor[size_t(s)];
      const float* dhs = dh + s * row + int64_t(d) * R;
      float* as = a + s * R;
      if (q < 0) {
        for (int c = 0; c < R; ++c) as[c] = dhs[c];
        continue;
      }
      const float *aq = a + q * R, *gs = vg + s * stride + R, *hs = h + s * row + int64_t(d) * R;
      float *dvs = dvg + s * stride, *dgs = dvs + R;
      for (int c = 0; c < R; c += LANES) {
        const Lanes next = load(aq + c);
        store(as + c, load(dhs + c) + load(gs + c) * next);
        store(dvs + c, load(dvs + c) + next);
        store(dgs + c, load(dgs + c) + next * load(hs + c));
      }
    }
}

// The widths with a kernel (nn::ray_scan_width of 32, 64 and 128 channels).
template <typename Kernel>
void by_width(int64_t r, Kernel&& kernel) {
  switch (r) {
    case 8: return kernel(std::integral_constant<int, 8>{});
    case 16: return kernel(std::integral_constant<int, 16>{});
    case 32: return kernel(std::integral_constant<int, 32>{});
    default: TORCH_CHECK(false, "board_ray_layer: no kernel for ", r, " rays");
  }
}

// The layer's sizes and its weights as the products read them: B operands row-major [depth][n].
struct Layer {
  int64_t c, r;
  const float *project, *bias, *out;    // W_p [2R][C], b_p [2R], W_o [C][8R] (torch's layouts)
  std::vector<float> project_t, out_t;  // W_p^T [C][2R], W_o^T [8R][C]
  Layer(const torch::Tensor& project_weight, const torch::Tensor& project_bias, const torch::Tensor& out_weight)
      : c(project_weight.size(1)),
        r(project_weight.size(0) / 2),
        project(project_weight.data_ptr<float>()),
        bias(project_bias.data_ptr<float>()),
        out(out_weight.data_ptr<float>()),
        project_t(transposed(project, 2 * r, c)),
        out_t(transposed(out, c, RAY_COUNT * r)) {}
  int64_t pair() const { return 2 * r; }          // a square's values and gates
  int64_t rays() const { return RAY_COUNT * r; }  // a square's h
  static std::vector<float> transposed(const float* m, int64_t rows, int64_t columns) {
    std::vector<float> t(size_t(rows * columns));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j) t[size_t(j * rows + i)] = m[i * columns + j];
    return t;
  }
};

// One board's values and gates vg [64][2R] (v = x W_p^T + b, g = sigmoid of the logits beside
// them) and its h [64][8R].
template <int R>
void board_scan(BoardIsa isa, const Layer& l, const float* x, float* vg, float* h) {
  tile_gemm(isa, RAY_SQUARES, int(l.c), int(l.pair()), {x, l.c, 1, l.project_t.data(), l.pair()}, vg, l.pair(), false);
  for (int64_t s = 0; s < RAY_SQUARES; ++s) {
    float* row = vg + s * l.pair();
    for (int64_t i = 0; i < R; ++i) row[i] += l.bias[i];
    for (int64_t i = R; i < 2 * R; ++i) row[i] = 1.0f / (1.0f + std::exp(-(row[i] + l.bias[i])));
  }
  scan_board<R>(vg, h);
}

// x + mix(x) in one node: the projection, the gates' sigmoid, the walks, the output map and the
// residual add of each board in cache, where torch's ops run five passes over the batch each way
// (and the backward's products with them). The backward recomputes h from the saved values and
// gates (a walk: cheaper than keeping h, 4x their size).
struct RayLayerFunction : torch::autograd::Function<RayLayerFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& project_weight, const torch::Tensor& project_bias,
                               const torch::Tensor& out_weight) {
    const Layer l(project_weight, project_bias, out_weight);
    const int64_t boards = x.size(0);
    auto y = torch::empty_like(x), vg = torch::empty({boards, RAY_SQUARES, l.pair()});
    const float* in = x.data_ptr<float>();
    float *out = y.data_ptr<float>(), *vgs = vg.data_ptr<float>();
    const BoardIsa isa = board_isa();
    by_width(l.r, [&](auto width) {
      at::parallel_for(0, boards, 4, [&](int64_t first, int64_t last) {
        std::vector<float> h(size_t(RAY_SQUARES * l.rays()));
        for (int64_t n = first; n < last; ++n) {
          const float* xb = in + n * RAY_SQUARES * l.c;
          float* yb = out + n * RAY_SQUARES * l.c;
          board_scan<width()>(isa, l, xb, vgs + n * RAY_SQUARES * l.pair(), h.data());
          std::copy(xb, xb + RAY_SQUARES * l.c, yb);
          tile_gemm(isa, RAY_SQUARES, int(l.rays()), int(l.c), {h.data(), l.rays(), 1, l.out_t.data(), l.c}, yb, l.c,
                    true);
        }
      });
    });
    ctx->save_for_backward({x, project_weight, project_bias, out_weight});
    ctx->saved_data["vg"] = vg;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &project_weight = saved[1], &out_weight = saved[3];
    const auto vg = ctx->saved_data["vg"].toTensor();
    const auto dy = grads[0].contiguous();
    const Layer l(project_weight, saved[2], out_weight);
    const int64_t boards = x.size(0);
    auto dx = torch::empty_like(x);
    const float *in = x.data_ptr<float>(), *vgs = vg.data_ptr<float>(), *dys = dy.data_ptr<float>();
    float* dxs = dx.data_ptr<float>();
    const BoardIsa isa = board_isa();
    // Each chunk's weight gradients [dW_p [2R][C] | db [2R] | dW_o [C][8R]], summed in order after.
    const int64_t dwp = l.pair() * l.c, dwo = l.c * l.rays(), floats = dwp + l.pair() + dwo;
    std::vector<std::vector<float>> partial(size_t(std::max(1, at::get_num_threads())));
    by_width(l.r, [&](auto width) {
      constexpr int R = width();
      over_chunks(boards, [&](int64_t chunk, int64_t first, int64_t last) {
        auto& sums = partial[size_t(chunk)];
        sums.assign(size_t(floats), 0.0f);
        float *gwp = sums.data(), *gb = gwp + dwp, *gwo = gb + l.pair();
        std::vector<float> h(size_t(RAY_SQUARES * l.rays())), dh(h.size()), dvg(size_t(RAY_SQUARES * l.pair())),
            a(size_t(RAY_SQUARES * R));
        for (int64_t n = first; n < last; ++n) {
          const float *xb = in + n * RAY_SQUARES * l.c, *vgb = vgs + n * RAY_SQUARES * l.pair(),
                      *dyb = dys + n * RAY_SQUARES * l.c;
          float* dxb = dxs + n * RAY_SQUARES * l.c;
          scan_board<R>(vgb, h.data());
          // Through the output map: dh = dy W_o, dW_o += dy^T h.
          tile_gemm(isa, RAY_SQUARES, int(l.c), int(l.rays()), {dyb, l.c, 1, l.out, l.rays()}, dh.data(), l.rays(),
                    false);
          tile_gemm(isa, int(l.c), RAY_SQUARES, int(l.rays()), {dyb, 1, l.c, h.data(), l.rays()}, gwo, l.rays(), true);
          // Through the walks, then the sigmoid: g (1 - g).
          scan_board_backward<R>(vgb, h.data(), dh.data(), dvg.data(), a.data());
          for (int64_t s = 0; s < RAY_SQUARES; ++s)
            for (int64_t i = R; i < 2 * R; ++i) {
              const float g = vgb[s * l.pair() + i];
              float& dg = dvg[size_t(s * l.pair() + i)];
              dg = dg * g * (1.0f - g);
            }
          // Through the projection and the residual: dx = dy + dvg W_p, dW_p += dvg^T x, db += sum dvg.
          std::copy(dyb, dyb + RAY_SQUARES * l.c, dxb);
          tile_gemm(isa, RAY_SQUARES, int(l.pair()), int(l.c), {dvg.data(), l.pair(), 1, l.project, l.c}, dxb, l.c,
                    true);
          tile_gemm(isa, int(l.pair()), RAY_SQUARES, int(l.c), {dvg.data(), 1, l.pair(), xb, l.c}, gwp, l.c, true);
          for (int64_t s = 0; s < RAY_SQUARES; ++s)
            for (int64_t i = 0; i < l.pair(); ++i) gb[i] += dvg[size_t(s * l.pair() + i)];
        }
      });
    });
    for (size_t chunk = 1; chunk < partial.size(); ++chunk)
      for (size_t i = 0; i < partial[chunk].size(); ++i) partial[0][i] += partial[chunk][i];
    const auto sums = torch::from_blob(partial[0].data(), {floats}).clone();
    return {dx, sums.narrow(0, 0, dwp).view(project_weight.sizes()), sums.narrow(0, dwp, l.pair()),
            sums.narrow(0, dwp + l.pair(), dwo).view(out_weight.sizes())};
  }
};

bool float_cpu(const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat; }

}  // namespace

bool board_ray_layer_applies(const torch::Tensor& squares, const torch::Tensor& project_weight,
                             const torch::Tensor& project_bias, const torch::Tensor& out_weight) {
  if (!float_cpu(squares) || !float_cpu(project_weight) || !float_cpu(project_bias) || !float_cpu(out_weight) ||
      at::autocast::is_autocast_enabled(torch::kCPU) || squares.dim() != 3 || squares.size(1) != RAY_SQUARES ||
      !squares.is_contiguous() || project_weight.dim() != 2 || project_bias.dim() != 1 || out_weight.dim() != 2)
    return false;
  const int64_t c = squares.size(2), r = project_weight.size(0) / 2;
  return (r == 8 || r == 16 || r == 32) && c % TILE_GEMM_COLUMNS == 0 && project_weight.size(0) == 2 * r &&
         project_weight.size(1) == c && project_bias.size(0) == 2 * r && out_weight.size(0) == c &&
         out_weight.size(1) == RAY_COUNT * r && project_weight.is_contiguous() && project_bias.is_contiguous() &&
         out_weight.is_contiguous();
}

torch::Tensor board_ray_layer(const torch::Tensor& squares, const torch::Tensor& project_weight,
                              const torch::Tensor& project_bias, const torch::Tensor& out_weight) {
  TORCH_CHECK(board_ray_layer_applies(squares, project_weight, project_bias, out_weight),
              "board_ray_layer: expected a contiguous CPU fp32 [B, 64, C] with C a multiple of ", TILE_GEMM_COLUMNS,
              " and fp32 weights [2R, C], [2R], [C, 8R] with R 8, 16 or 32, autocast off; got ", squares.sizes(), ", ",
              project_weight.sizes(), ", ", project_bias.sizes(), ", ", out_weight.sizes());
  return RayLayerFunction::apply(squares, project_weight, project_bias, out_weight);
}

}  // namespace legalnet::nn
