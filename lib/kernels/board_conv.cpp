#include "kernels/kernels.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <memory>
#include <vector>

// The transforms pass 8-float vectors between inlined helpers; GCC warns that their ABI
// changes with AVX, which does not matter for functions that are always inlined.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "kernels/board_shapes.h"
#include "kernels/over_chunks.h"
#include "kernels/tile_gemm.h"
#include "kernels/winograd_tiles.h"

namespace legalnet::nn {

namespace {

using namespace winograd;

using Pass = void (*)(const float*, float*, const Shape&, int64_t, int64_t);
struct Passes {
  Pass input, output, output_t, input_t;
};

// The same passes compiled three times: for AVX-512 (16-float blocks: twice the registers of
// AVX2, so the 6x6 tiles spill less), AVX2+FMA (8-float blocks) and the build's baseline.
template <class Transform, int M>
__attribute__((target("avx512f"))) void pass_avx512(const float* in, float* out, const Shape& s, int64_t b0,
                                                    int64_t b1) {
  boards<Transform, M, v16, v8>(in, out, s, b0, b1);
}
template <class Transform, int M>
__attribute__((target("avx2,fma"))) void pass_avx2(const float* in, float* out, const Shape& s, int64_t b0,
                                                   int64_t b1) {
  boards<Transform, M, v8>(in, out, s, b0, b1);
}
template <class Transform, int M>
void pass_base(const float* in, float* out, const Shape& s, int64_t b0, int64_t b1) {
  boards<Transform, M, v4>(in, out, s, b0, b1);
}
template <int M>
constexpr Passes avx512_passes() {
  return {pass_avx512<InputTransform, M>, pass_avx512<OutputTransform, M>, pass_avx512<OutputGradient, M>,
          pass_avx512<InputGradient, M>};
}
template <int M>
constexpr Passes avx2_passes() {
  return {pass_avx2<InputTransform, M>, pass_avx2<OutputTransform, M>, pass_avx2<OutputGradient, M>,
          pass_avx2<InputGradient, M>};
}
template <int M>
constexpr Passes base_passes() {
  return {pass_base<InputTransform, M>, pass_base<OutputTransform, M>, pass_base<OutputGradient, M>,
          pass_base<InputGradient, M>};
}

const Passes& passes_for(int64_t m, BoardIsa isa) {
  static const Passes avx512[2] = {avx512_passes<2>(), avx512_passes<4>()};
  static const Passes avx2[2] = {avx2_passes<2>(), avx2_passes<4>()};
  static const Passes base[2] = {base_passes<2>(), base_passes<4>()};
  const Passes* set = isa == BoardIsa::AVX512 ? avx512 : isa == BoardIsa::AVX2 ? avx2 : base;
  return set[m == 2 ? 0 : 1];
}

int64_t padded(int64_t channels) { return (channels + TILE_GEMM_COLUMNS - 1) / TILE_GEMM_COLUMNS * TILE_GEMM_COLUMNS; }

// Boards per block: a block's transform-domain buffers (36 x 16 tiles x 32 channels x 4 bytes,
// plus the positions' padding: 74 KiB each for F(4x4)) stay in L2 from the transform through the
// products to the next transform, where a pass over the whole batch would send every one through
// memory. Blocks of 2 and 8 boards measured slower or the same (docs/benchmarks.md, issue 32).
constexpr int64_t BLOCK_BOARDS = 4;

// One convolution's sizes: m the output tile, c and k the channels (cp and kp padded to the
// matrix products' column multiple).
struct Plan {
  int64_t m, boards, c, k;
  int64_t positions() const { return (m + 2) * (m + 2); }
  int64_t tiles_per_board() const { return (BOARD / m) * (BOARD / m); }
  int64_t cp() const { return padded(c); }
  int64_t kp() const { return padded(k); }
  int64_t blocks() const { return (boards + BLOCK_BOARDS - 1) / BLOCK_BOARDS; }
  // A block's transform-domain buffer: positions() of them, position_step() apart.
  size_t block_floats(int64_t stride) const {
    return size_t(positions() * position_step(BLOCK_BOARDS * tiles_per_board(), stride));
  }
};

// One block of boards: the first board, how many, its tiles and the transforms' shape.
struct Block {
  int64_t first, boards, tiles;
  Shape shape;
  Block(const Plan& p, int64_t index) {
    first = index * BLOCK_BOARDS;
    boards = std::min(BLOCK_BOARDS, p.boards - first);
    tiles = boards * p.tiles_per_board();
    shape = Shape{boards, p.c, p.k, p.cp(), p.kp()};
  }
  // Where the block's boards start in a [B,8,8,channels] tensor, and how many floats they hold.
  int64_t square(int64_t channels) const { return first * BOARD * BOARD * channels; }
  int64_t floats(int64_t channels) const { return boards * BOARD * BOARD * channels; }
};

// Asks for a block's boards in a [B,8,8,channels] tensor to be brought into L2 ahead of the
// transforms that read them (kind READ) or write them (WRITE: fetched for ownership, so the
// stores do not wait for the line). The convolution's input comes back cold in the backward pass,
// saved in the forward one; the outputs are 2 MB a layer. Measured: 4% of an imitated AVX2
// training step (docs/benchmarks.md, issue 32).
enum class Prefetch { READ = 0, WRITE = 1 };
template <Prefetch kind>
void prefetch(const float* tensor, const Block& blk, int64_t channels) {
  const char* bytes = reinterpret_cast<const char*>(tensor + blk.square(channels));
  for (int64_t off = 0; off < blk.floats(channels) * int64_t(sizeof(float)); off += 64)
    __builtin_prefetch(bytes + off, int(kind), 2);
}

// A block's transform-domain buffer, uninitialized: every float that is read is written first
// (the padding channels are zeroed where they exist).
std::unique_ptr<float[]> block_buffer(size_t floats) { return std::unique_ptr<float[]>(new float[floats]); }

// The products of one block at every transform-domain position q: C_q (+)= A_q B_q, where A_q
// is the block's [tiles, depth] slice (or its transpose) and B_q a [depth, n] matrix, each
// operand's positions `step` floats apart.
struct Steps {
  int64_t a, b, c;
};
void products(const Plan& p, BoardIsa isa, int rows, int depth, int n, const float* a, int64_t a_row, int64_t a_depth,
              const float* b, float* c, Steps step, bool accumulate) {
  for (int64_t q = 0; q < p.positions(); ++q)
    tile_gemm(isa, rows, depth, n, {a + q * step.a, a_row, a_depth, b + q * step.b, n}, c + q * step.c, n, accumulate);
}

// y = conv(x, U): per block, V = input transform of x, M_q = V_q U_q, y = output transform of M.
void forward_blocks(const Plan& p, const float* x, const float* u, float* y) {
  const BoardIsa isa = board_isa();
  const Passes& f = passes_for(p.m, isa);
  const int64_t cp = p.cp(), kp = p.kp();
  over_chunks(p.blocks(), [&](int64_t, int64_t b0, int64_t b1) {
    const auto v_buffer = block_buffer(p.block_floats(cp)), m_buffer = block_buffer(p.block_floats(kp));
    float *v = v_buffer.get(), *mm = m_buffer.get();
    for (int64_t i = b0; i < b1; ++i) {
      const Block blk(p, i);
      if (i + 1 < b1) prefetch<Prefetch::READ>(x, Block(p, i + 1), p.c);
      prefetch<Prefetch::WRITE>(y, blk, p.k);
      if (cp != p.c) std::fill(v, v + p.block_floats(cp), 0.0f);  // the padding channels
      f.input(x + blk.square(p.c), v, blk.shape, 0, blk.boards);
      products(p, isa, int(blk.tiles), int(cp), int(kp), v, cp, 1, u, mm,
               {position_step(blk.tiles, cp), cp * kp, position_step(blk.tiles, kp)}, false);
      f.output(mm, y + blk.square(p.k), blk.shape, 0, blk.boards);
    }
  });
}

// The backward pass per block: gM = the output transform's transpose of gy; the input gradient
// gV_q = gM_q U_q^T through the input transform's transpose (gx); the weight gradient
// gU_q += V_q^T gM_q with V recomputed from x (cheaper than keeping it: it is 2.25x x's size),
// summed per chunk, then over the chunks in order.
void backward_blocks(const Plan& p, const float* x, const float* u_t, const float* gy, float* gx, float* gu) {
  const BoardIsa isa = board_isa();
  const Passes& f = passes_for(p.m, isa);
  const int64_t cp = p.cp(), kp = p.kp();
  const size_t u_floats = size_t(p.positions() * cp * kp);
  std::vector<std::unique_ptr<float[]>> partial(size_t(std::max<int64_t>(1, at::get_num_threads())));
  over_chunks(p.blocks(), [&](int64_t chunk, int64_t b0, int64_t b1) {
    const auto m_buffer = block_buffer(p.block_floats(kp)), v_buffer = block_buffer(p.block_floats(cp));
    float *gm = m_buffer.get(), *v = v_buffer.get();
    // The chunk's sums, uninitialized: its first block stores its products, the others add (a
    // chunk with no block holds zeros).
    float* gu_chunk = nullptr;
    if (gu != nullptr) {
      partial[size_t(chunk)] = block_buffer(u_floats);
      gu_chunk = partial[size_t(chunk)].get();
      if (b0 == b1) std::fill(gu_chunk, gu_chunk + u_floats, 0.0f);
    }
    for (int64_t i = b0; i < b1; ++i) {
      const Block blk(p, i);
      if (gu != nullptr) prefetch<Prefetch::READ>(x, blk, p.c);
      if (i + 1 < b1) prefetch<Prefetch::READ>(gy, Block(p, i + 1), p.k);
      if (gx != nullptr) prefetch<Prefetch::WRITE>(gx, blk, p.c);
      if (kp != p.k) std::fill(gm, gm + p.block_floats(kp), 0.0f);
      f.output_t(gy + blk.square(p.k), gm, blk.shape, 0, blk.boards);
      if (gx != nullptr) {
        products(p, isa, int(blk.tiles), int(kp), int(cp), gm, kp, 1, u_t, v,
                 {position_step(blk.tiles, kp), kp * cp, position_step(blk.tiles, cp)}, false);
        f.input_t(v, gx + blk.square(p.c), blk.shape, 0, blk.boards);
      }
      if (gu != nullptr) {
        if (cp != p.c) std::fill(v, v + p.block_floats(cp), 0.0f);
        f.input(x + blk.square(p.c), v, blk.shape, 0, blk.boards);
        products(p, isa, int(cp), int(blk.tiles), int(kp), v, 1, cp, gm, gu_chunk,
                 {position_step(blk.tiles, cp), position_step(blk.tiles, kp), cp * kp}, i != b0);
      }
    }
  });
  if (gu == nullptr) return;
  std::copy(partial[0].get(), partial[0].get() + u_floats, gu);  // chunk 0 always exists
  for (size_t chunk = 1; chunk < partial.size(); ++chunk)
    if (const float* part = partial[chunk].get(); part != nullptr)
      for (size_t j = 0; j < u_floats; ++j) gu[j] += part[j];
}

// The weight transform U_q[c][k] = (G w[k][c] G^T)[i][j] for q = i * A + j, into U [A*A, Cp, Kp]
// and U^T [A*A, Kp, Cp] for the input gradient (zero in the padding), and its transpose for the
// weight gradient: gw[k][c] = G^T gU[k][c] G. A few thousand numbers a layer, in the
// convolution's autograd node (torch's matmuls, permute and pad cost a dozen nodes a layer,
// forward and backward), computed for PAIR_RUN channel pairs at once along U's rows (the
// compiler's vectors) so that U and U^T are written, and gU read, row by row: U once for each
// input channel, U^T again for each output channel. Written pair by pair, U's A*A positions lie
// 4 KiB apart in the same L1 sets; copied from a pair-major buffer, its strides conflicted in
// L1 as well: each cost more than the arithmetic (70 us a convolution, docs/benchmarks.md,
// issue 32).
constexpr int64_t PAIR_RUN = 16;

// out[q * out_step + r] = (G w_r G^T)[q] for the run's pairs r < n, w_r = w + r * w_step.
template <int M>
void transform_run(const float* w, int64_t w_step, int64_t n, float* out, int64_t out_step) {
  using W = Winograd<M>;
  constexpr int A = W::A;
  float t[A][3][PAIR_RUN];
  for (int i = 0; i < A; ++i)
    for (int b = 0; b < 3; ++b)
      for (int64_t r = 0; r < n; ++r) {
        const float* g = w + r * w_step;
        t[i][b][r] = W::G[i][0] * g[b] + W::G[i][1] * g[3 + b] + W::G[i][2] * g[6 + b];
      }
  for (int i = 0; i < A; ++i)
    for (int j = 0; j < A; ++j) {
      float* o = out + (i * A + j) * out_step;
      for (int64_t r = 0; r < n; ++r)
        o[r] = t[i][0][r] * W::G[j][0] + t[i][1][r] * W::G[j][1] + t[i][2][r] * W::G[j][2];
    }
}

template <int M>
void weight_transform(const Plan& p, const float* w, float* u, float* u_t) {
  const int64_t cp = p.cp(), kp = p.kp(), C = p.c, K = p.k;
  at::parallel_for(0, C + K, 1, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      if (i < C) {  // U's rows of input channel c: the pairs (k, c), C*9 floats apart in w
        const int64_t c = i;
        for (int64_t k = 0; k < K; k += PAIR_RUN)
          transform_run<M>(w + (k * C + c) * 9, C * 9, std::min(PAIR_RUN, K - k), u + c * kp + k, cp * kp);
      } else {  // U^T's rows of output channel k: the pairs (k, c), consecutive
        const int64_t k = i - C;
        for (int64_t c = 0; c < C; c += PAIR_RUN)
          transform_run<M>(w + (k * C + c) * 9, 9, std::min(PAIR_RUN, C - c), u_t + k * cp + c, kp * cp);
      }
    }
  });
}

template <int M>
void weight_gradient(const Plan& p, const float* gu, float* gw) {
  using W = Winograd<M>;
  constexpr int A = W::A;
  const int64_t cp = p.cp(), kp = p.kp(), C = p.c, K = p.k;
  at::parallel_for(0, C, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t k0 = 0; k0 < K; k0 += PAIR_RUN) {
        const int64_t n = std::min(PAIR_RUN, K - k0);
        const float* v = gu + c * kp + k0;  // gU_q[c][k0 + r] at v[q * cp * kp + r]
        float t[A][3][PAIR_RUN] = {};
        for (int i = 0; i < A; ++i)
          for (int j = 0; j < A; ++j)
            for (int b = 0; b < 3; ++b)
              for (int64_t r = 0; r < n; ++r) t[i][b][r] += v[(i * A + j) * cp * kp + r] * W::G[j][b];
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            for (int64_t r = 0; r < n; ++r) {
              float sum = 0;
              for (int i = 0; i < A; ++i) sum += W::G[i][a] * t[i][b][r];
              gw[((k0 + r) * C + c) * 9 + a * 3 + b] = sum;
            }
      }
  });
}

torch::Tensor board_tensor(int64_t boards, int64_t channels) {
  return torch::empty({boards, channels, BOARD, BOARD},
                      torch::TensorOptions().memory_format(torch::MemoryFormat::ChannelsLast));
}

// The convolution of x [B,C,8,8] with the weight [K,C,3,3]; U = the transformed weight.
struct BoardConvFunction : torch::autograd::Function<BoardConvFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, int64_t m) {
    const auto xc = x.contiguous(torch::MemoryFormat::ChannelsLast);
    const auto w = weight.contiguous();
    const Plan p{m, x.size(0), x.size(1), w.size(0)};
    // Zeros only where there are padding channels: the transform writes every other float.
    const bool padding = p.cp() != p.c || p.kp() != p.k;
    const auto make = [&](int64_t rows, int64_t cols) {
      return padding ? torch::zeros({p.positions(), rows, cols}) : torch::empty({p.positions(), rows, cols});
    };
    auto u = make(p.cp(), p.kp()), u_t = make(p.kp(), p.cp());
    (m == 2 ? weight_transform<2> : weight_transform<4>)(p, w.data_ptr<float>(), u.data_ptr<float>(),
                                                         u_t.data_ptr<float>());
    auto y = board_tensor(p.boards, p.k);
    forward_blocks(p, xc.data_ptr<float>(), u.data_ptr<float>(), y.data_ptr<float>());
    ctx->save_for_backward({xc, u_t});
    ctx->saved_data["m"] = m;
    ctx->saved_data["k"] = p.k;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& u_t = saved[1];
    const int64_t m = ctx->saved_data["m"].toInt();
    const Plan p{m, x.size(0), x.size(1), ctx->saved_data["k"].toInt()};
    const auto gy = grads[0].contiguous(torch::MemoryFormat::ChannelsLast);
    torch::Tensor gx, gu, gw;
    if (ctx->needs_input_grad(0)) gx = board_tensor(p.boards, p.c);
    if (ctx->needs_input_grad(1)) gu = torch::empty({p.positions(), p.cp(), p.kp()});
    backward_blocks(p, x.data_ptr<float>(), u_t.data_ptr<float>(), gy.data_ptr<float>(),
                    gx.defined() ? gx.data_ptr<float>() : nullptr, gu.defined() ? gu.data_ptr<float>() : nullptr);
    if (gu.defined()) {
      gw = torch::empty({p.k, p.c, 3, 3});
      (m == 2 ? weight_gradient<2> : weight_gradient<4>)(p, gu.data_ptr<float>(), gw.data_ptr<float>());
    }
    return {gx, gw, torch::Tensor()};
  }
};

}  // namespace

bool board_conv_applies(const torch::Tensor& x, const torch::Tensor& weight) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat &&
         !at::autocast::is_autocast_enabled(torch::kCPU) && board_shapes(x, weight);
}

torch::Tensor board_conv3x3(const torch::Tensor& x, const torch::Tensor& weight, WinogradTile tile) {
  return BoardConvFunction::apply(x, weight, int64_t(tile));
}

}  // namespace legalnet::nn
