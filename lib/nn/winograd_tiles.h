// The Winograd tile transforms of the board kernels (nn/board_conv.cpp), one board's tiles at
// a time: the input transform (board -> transform domain), the output transform (products ->
// board) and their transposes for the backward pass. Templates over the vector type, so that
// board_conv.cpp compiles them for AVX2+FMA and for the baseline. Included by board_conv.cpp
// only; no torch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace legalnet::nn::winograd {

// Lavin & Gray's matrices: the input tile d (A x A) becomes V = BT d BT^T, a weight g (3x3)
// U = G g G^T, and the product M = U * V (element-wise, summed over input channels) gives
// the M x M output tile AT M AT^T.
template <int M>
struct Winograd;

template <>
struct Winograd<2> {
  static constexpr int A = 4;
  static constexpr float BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr float G[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
  static constexpr float AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

template <>
struct Winograd<4> {
  static constexpr int A = 6;
  static constexpr float BT[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                     {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr float G[6][3] = {{1.0f / 4, 0, 0},
                                    {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                    {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                    {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                    {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                    {0, 0, 1}};
  static constexpr float AT[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

// A block of channels: 8 floats (AVX2), 4 (the x86-64-v2 baseline's SSE) or 1 (the tail).
typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));

template <typename Vec>
constexpr int lanes() {
  return sizeof(Vec) / sizeof(float);
}
template <typename Vec>
[[gnu::always_inline]] inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename Vec>
[[gnu::always_inline]] inline void store(float* p, Vec v) {
  std::memcpy(p, &v, sizeof v);
}

// acc + c * v, with the coefficients' zeros and ones folded away once the loops are unrolled
// over the constant matrices.
template <typename Vec>
[[gnu::always_inline]] inline Vec madd(Vec acc, float c, Vec v) {
  if (c == 0) return acc;
  if (c == 1) return acc + v;
  if (c == -1) return acc - v;
  return acc + c * v;
}

constexpr int BOARD = 8;

// The shapes the transforms share: B boards, C input and K output channels; the tiles are
// numbered board-major (board * TILES + tile row * T + tile column), N = B * TILES.
// The transform-domain buffers [A*A, N, stride] pad their channels to a stride of their own
// (the matrix products' column multiple); the boards [B,8,8,channels] do not.
struct Shape {
  int64_t boards, channels_in, channels_out;
  int64_t stride_in, stride_out;  // >= channels_in, channels_out
};

// out = L x R^T for constant matrices L [R][I] and R [O][J], given as coefficient functions:
// the shape of every transform here (the "sandwich"); unrolled over the constant matrices, their
// zeros and ones fold away.
template <int R, int I, int J, int O, typename Vec, typename Left, typename Right>
[[gnu::always_inline]] inline void sandwich(const Vec (&x)[I][J], Vec (&out)[R][O], Left left, Right right) {
  Vec tmp[R][J];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int e = 0; e < J; ++e) {
      Vec acc{};
#pragma GCC unroll 8
      for (int a = 0; a < I; ++a) acc = madd(acc, left(i, a), x[a][e]);
      tmp[i][e] = acc;
    }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < O; ++j) {
      Vec acc{};
#pragma GCC unroll 8
      for (int e = 0; e < J; ++e) acc = madd(acc, right(j, e), tmp[i][e]);
      out[i][j] = acc;
    }
}

// Where tile t's transform-domain element (i, j) of channel c lies in a [A*A, N, stride] buffer.
template <int M>
inline int64_t tile_at(const Shape& s, int64_t stride, int64_t b, int ty, int tx, int i, int j, int c) {
  constexpr int A = Winograd<M>::A, T = BOARD / M;
  const int64_t N = s.boards * T * T, t = b * T * T + ty * T + tx;
  return ((i * A + j) * N + t) * stride + c;
}
// Where square (r, q) of board b lies in a [B,8,8,channels] buffer.
inline int64_t square_at(int64_t channels, int64_t b, int r, int q, int c) {
  return ((b * BOARD + r) * BOARD + q) * channels + c;
}

// The four transforms, each one tile and one block of channels (Vec) at a time.
// Forward, input: x [B,8,8,C] -> V [A*A, N, C], V = BT d BT^T.
struct InputTransform {
  static int64_t channels(const Shape& s) { return s.channels_in; }
  template <int M, typename Vec>
  [[gnu::always_inline]] static void block(const float* x, float* V, const Shape& s, int64_t b, int ty, int tx, int c) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    Vec d[A][A], v[A][A];
#pragma GCC unroll 8
    for (int a = 0; a < A; ++a)
#pragma GCC unroll 8
      for (int e = 0; e < A; ++e) {
        const int r = ty * M + a - 1, q = tx * M + e - 1;
        d[a][e] = r >= 0 && r < BOARD && q >= 0 && q < BOARD ? load<Vec>(x + square_at(s.channels_in, b, r, q, c)) : Vec{};
      }
    const auto bt = [](int i, int a) { return W::BT[i][a]; };
    sandwich(d, v, bt, bt);
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < A; ++j) store(V + tile_at<M>(s, s.stride_in, b, ty, tx, i, j, c), v[i][j]);
  }
};

// Forward, output: the products Mm [A*A, N, K] -> y [B,8,8,K], y = AT m AT^T.
struct OutputTransform {
  static int64_t channels(const Shape& s) { return s.channels_out; }
  template <int M, typename Vec>
  [[gnu::always_inline]] static void block(const float* Mm, float* y, const Shape& s, int64_t b, int ty, int tx, int k) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    Vec m[A][A], out[M][M];
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < A; ++j) m[i][j] = load<Vec>(Mm + tile_at<M>(s, s.stride_out, b, ty, tx, i, j, k));
    const auto at = [](int r, int i) { return W::AT[r][i]; };
    sandwich(m, out, at, at);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 8
      for (int q = 0; q < M; ++q) store(y + square_at(s.channels_out, b, ty * M + r, tx * M + q, k), out[r][q]);
  }
};

// Backward, the output transform's transpose: gy [B,8,8,K] -> gM [A*A, N, K], gM = AT^T gY AT.
struct OutputGradient {
  static int64_t channels(const Shape& s) { return s.channels_out; }
  template <int M, typename Vec>
  [[gnu::always_inline]] static void block(const float* gy, float* gM, const Shape& s, int64_t b, int ty, int tx,
                                           int k) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    Vec g[M][M], out[A][A];
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 8
      for (int q = 0; q < M; ++q) g[r][q] = load<Vec>(gy + square_at(s.channels_out, b, ty * M + r, tx * M + q, k));
    const auto at_t = [](int i, int r) { return W::AT[r][i]; };
    sandwich(g, out, at_t, at_t);
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < A; ++j) store(gM + tile_at<M>(s, s.stride_out, b, ty, tx, i, j, k), out[i][j]);
  }
};

// Backward, the input transform's transpose: gV [A*A, N, C] -> the tile's gd = BT^T gV BT, added
// into the board's padded gradient pad [10,10,C] (neighbouring tiles overlap by 2 rows/columns).
struct InputGradient {
  static int64_t channels(const Shape& s) { return s.channels_in; }
  template <int M, typename Vec>
  [[gnu::always_inline]] static void block(const float* gV, float* pad, const Shape& s, int64_t b, int ty, int tx,
                                           int c) {
    using W = Winograd<M>;
    constexpr int A = W::A, P = BOARD + 2;
    const int64_t C = s.channels_in;
    Vec g[A][A], gd[A][A];
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < A; ++j) g[i][j] = load<Vec>(gV + tile_at<M>(s, s.stride_in, b, ty, tx, i, j, c));
    const auto bt_t = [](int a, int i) { return W::BT[i][a]; };
    sandwich(g, gd, bt_t, bt_t);
#pragma GCC unroll 8
    for (int a = 0; a < A; ++a)
#pragma GCC unroll 8
      for (int e = 0; e < A; ++e) {
        float* at = pad + ((ty * M + a) * P + tx * M + e) * C + c;
        store(at, load<Vec>(at) + gd[a][e]);
      }
  }
};

// The channels of one tile in blocks of the widest vector first, then the narrower ones
// (AVX-512: 16, then 8, then 1 at a time).
template <class Transform, int M, typename Vec, typename... Narrower>
[[gnu::always_inline]] inline void channel_blocks(const float* in, float* out, const Shape& s, int64_t b, int ty,
                                                  int tx, int& c, int channels) {
  for (; c + lanes<Vec>() <= channels; c += lanes<Vec>()) Transform::template block<M, Vec>(in, out, s, b, ty, tx, c);
  if constexpr (sizeof...(Narrower) > 0) channel_blocks<Transform, M, Narrower...>(in, out, s, b, ty, tx, c, channels);
}

// Every tile of board b.
template <class Transform, int M, typename... Vecs>
[[gnu::always_inline]] inline void board_tiles(const float* in, float* out, const Shape& s, int64_t b) {
  constexpr int T = BOARD / M;
  const int channels = int(Transform::channels(s));
  for (int ty = 0; ty < T; ++ty)
    for (int tx = 0; tx < T; ++tx) {
      int c = 0;
      channel_blocks<Transform, M, Vecs..., float>(in, out, s, b, ty, tx, c, channels);
    }
}

// A pass over boards [b0, b1); the input gradient sums the overlapping tiles in a padded board.
template <class Transform, int M, typename... Vecs>
[[gnu::always_inline]] inline void boards(const float* in, float* out, const Shape& shape, int64_t b0, int64_t b1) {
  // A copy whose address never escapes: the vector stores (memcpy, which may alias anything)
  // would otherwise make the compiler reload the sizes after each of them.
  const Shape s = shape;
  if constexpr (!std::is_same_v<Transform, InputGradient>) {
    for (int64_t b = b0; b < b1; ++b) board_tiles<Transform, M, Vecs...>(in, out, s, b);
  } else {
    constexpr int P = BOARD + 2;
    const int64_t C = s.channels_in;
    std::vector<float> pad(size_t(P * P * C));
    for (int64_t b = b0; b < b1; ++b) {
      std::fill(pad.begin(), pad.end(), 0.0f);
      board_tiles<Transform, M, Vecs...>(in, pad.data(), s, b);
      for (int r = 0; r < BOARD; ++r)
        std::memcpy(out + square_at(C, b, r, 0, 0), pad.data() + ((r + 1) * P + 1) * C, sizeof(float) * BOARD * C);
    }
  }
}

}  // namespace legalnet::nn::winograd
