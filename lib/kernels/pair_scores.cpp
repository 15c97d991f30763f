#include "kernels/kernels.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include <cmath>
#include <vector>

#include "kernels/tile_gemm.h"

namespace legalnet::nn {

namespace {

constexpr int64_t SQUARES = 64;

// One board's sizes: d the query's (and key's) width, the rows 2d apart.
struct Board {
  int64_t d;
  int64_t row() const { return 2 * d; }
  float scale() const { return float(1.0 / std::sqrt(double(d))); }
};

struct PairScoresFunction : torch::autograd::Function<PairScoresFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& squares) {
    const int64_t boards = squares.size(0);
    const Board b{squares.size(2) / 2};
    auto scores = torch::empty({boards, SQUARES * SQUARES});
    const float* in = squares.data_ptr<float>();
    float* out = scores.data_ptr<float>();
    const BoardIsa isa = board_isa();
    const float scale = b.scale();
    at::parallel_for(0, boards, 1, [&](int64_t first, int64_t last) {
      // K^T / sqrt(d), [d][64]: the products read B row-major.
      std::vector<float> key_t(size_t(b.d * SQUARES));
      for (int64_t n = first; n < last; ++n) {
        const float* sq = in + n * SQUARES * b.row();
        for (int64_t to = 0; to < SQUARES; ++to)
          for (int64_t c = 0; c < b.d; ++c) key_t[size_t(c * SQUARES + to)] = sq[to * b.row() + b.d + c] * scale;
        tile_gemm(isa, int(SQUARES), int(b.d), int(SQUARES), {sq, b.row(), 1, key_t.data(), SQUARES},
                  out + n * SQUARES * SQUARES, SQUARES, false);
      }
    });
    ctx->save_for_backward({squares});
    return scores;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto squares = ctx->get_saved_variables()[0];
    const auto g = grads[0].contiguous();
    const int64_t boards = squares.size(0);
    const Board b{squares.size(2) / 2};
    auto grad = torch::empty_like(squares);
    const float *in = squares.data_ptr<float>(), *gs = g.data_ptr<float>();
    float* out = grad.data_ptr<float>();
    const BoardIsa isa = board_isa();
    const float scale = b.scale();
    at::parallel_for(0, boards, 1, [&](int64_t first, int64_t last) {
      for (int64_t n = first; n < last; ++n) {
        const float* sq = in + n * SQUARES * b.row();
        const float* dS = gs + n * SQUARES * SQUARES;
        float* dsq = out + n * SQUARES * b.row();
        // dQ[from] = sum_to dS[from][to] K[to]; dK[to] = sum_from dS[from][to] Q[from] (dS read
        // transposed through A's strides); then both times 1/sqrt(d).
        tile_gemm(isa, int(SQUARES), int(SQUARES), int(b.d), {dS, SQUARES, 1, sq + b.d, b.row()}, dsq, b.row(), false);
        tile_gemm(isa, int(SQUARES), int(SQUARES), int(b.d), {dS, 1, SQUARES, sq, b.row()}, dsq + b.d, b.row(), false);
        for (int64_t i = 0; i < SQUARES * b.row(); ++i) dsq[i] *= scale;
      }
    });
    return {grad};
  }
};

}  // namespace

bool board_pair_scores_applies(const torch::Tensor& squares) {
  return squares.device().is_cpu() && squares.scalar_type() == torch::kFloat &&
         !at::autocast::is_autocast_enabled(torch::kCPU) && squares.dim() == 3 && squares.size(1) == SQUARES &&
         squares.size(2) > 0 && squares.size(2) % (2 * TILE_GEMM_COLUMNS) == 0 && squares.is_contiguous();
}

torch::Tensor board_pair_scores(const torch::Tensor& squares) {
  TORCH_CHECK(board_pair_scores_applies(squares), "board_pair_scores: expected a contiguous CPU fp32 [B, 64, 2d] ",
              "with d a multiple of ", TILE_GEMM_COLUMNS, ", got ", squares.sizes());
  return PairScoresFunction::apply(squares);
}

}  // namespace legalnet::nn
