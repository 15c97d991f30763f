// The Winograd tile transforms of the board kernels (kernels/board_conv.cpp), one board's tiles at
// a time: the input transform (board -> transform domain), the output transform (products ->
// board) and their transposes for the backward pass. Templates over the vector type, so that
// board_conv.cpp compiles them for AVX-512, AVX2+FMA and the baseline, and over the tile's place
// on the board. Included by board_conv.cpp only; no torch.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

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

constexpr int BOARD = 8;

// The transforms' lambdas (an element's load or store, a coefficient) must be inlined like the
// rest: a call would pass vectors through memory.
#define WINOGRAD_INLINE __attribute__((always_inline))

// The shapes the transforms share: B boards, C input and K output channels; the tiles are
// numbered board-major (board * TILES + tile row * T + tile column), N = B * TILES.
// The transform-domain buffers hold A*A positions of [N, stride] each, position_step() floats
// apart; they pad their channels to a stride of their own (the matrix products' column
// multiple); the boards [B,8,8,channels] do not.
struct Shape {
  int64_t boards, channels_in, channels_out;
  int64_t stride_in, stride_out;  // >= channels_in, channels_out
};

// Floats between two positions of a transform-domain buffer: one more cache line than N * stride.
// A block of 4 boards has N * stride = 16 tiles x 32 channels = 2 KiB, so without it a tile's 36
// positions fall into 2 of the 64 sets of a 32 KiB 8-way L1 and evict each other on every
// store (the transforms ran 1.5-3x slower: docs/benchmarks.md, issue 32).
constexpr int64_t POSITION_PAD = 16;
inline int64_t position_step(int64_t tiles, int64_t stride) { return tiles * stride + POSITION_PAD; }

// One term of a transform's sum: acc + c * v, with the coefficients' ones folded to an add or a
// subtraction; `first` starts the sum (no add to a zero, which the compiler may not fold).
template <typename Vec>
[[gnu::always_inline]] inline Vec term(Vec acc, float c, Vec v, bool first) {
  if (first) return c == 1 ? v : c == -1 ? -v : c * v;
  if (c == 1) return acc + v;
  if (c == -1) return acc - v;
  return acc + c * v;
}

// out = L x R^T for constant matrices L [R][I] and R [O][J], the shape of every transform here
// (the "sandwich"). x(a, e) gives the input's elements and put(i, j, v) takes the output's;
// live_row(a) and live_col(e) say which of x's rows and columns may be nonzero (the board's
// border: the tile's padding squares are zeros and cost nothing). The first product runs one
// column of x at a time and the second one row of the intermediate, so that each works on a
// dozen vectors: the tile's 72 live at once spill AVX2's 16 registers throughout. Unrolled over
// the constant matrices, their zeros, ones and the border fold away.
template <int R, int I, int J, int O, typename Vec, typename X, typename Put, typename Left, typename Right,
          typename LiveRow, typename LiveCol>
[[gnu::always_inline]] inline void sandwich(X x, Put put, Left left, Right right, LiveRow live_row, LiveCol live_col) {
  Vec tmp[R][J];
#pragma GCC unroll 8
  for (int e = 0; e < J; ++e) {
    if (!live_col(e)) continue;
    Vec col[I];
#pragma GCC unroll 8
    for (int a = 0; a < I; ++a)
      if (live_row(a)) col[a] = x(a, e);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      Vec acc{};
      bool first = true;
#pragma GCC unroll 8
      for (int a = 0; a < I; ++a) {
        const float c = left(i, a);
        if (c == 0 || !live_row(a)) continue;
        acc = term(acc, c, col[a], first);
        first = false;
      }
      tmp[i][e] = acc;
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < O; ++j) {
      Vec acc{};
      bool first = true;
#pragma GCC unroll 8
      for (int e = 0; e < J; ++e) {
        const float c = right(j, e);
        if (c == 0 || !live_col(e)) continue;
        acc = term(acc, c, tmp[i][e], first);
        first = false;
      }
      put(i, j, acc);
    }
}

// Where tile t's transform-domain element (i, j) of channel c lies: tile_base + (i * A + j) *
// position_step.
template <int M>
inline int64_t tile_base(int64_t stride, int64_t b, int ty, int tx, int c) {
  constexpr int T = BOARD / M;
  return ((b * T * T + ty * T + tx) * stride) + c;
}
template <int M>
inline int64_t position_step(const Shape& s, int64_t stride) {
  constexpr int T = BOARD / M;
  return position_step(s.boards * T * T, stride);
}
// The board's row (or column) under row (column) a of tile t's input window: the window starts
// one line before the tile's M output lines and ends one after, so its first and last lines
// are off the board at the board's edges.
template <int M>
constexpr int window_line(int t, int a) {
  return t * M + a - 1;
}
constexpr bool on_board(int line) { return line >= 0 && line < BOARD; }
// Every line of an output tile or a transform-domain tile is live (sandwich's live_row/live_col).
inline constexpr auto EVERY_LINE = [](int) WINOGRAD_INLINE { return true; };
// Where square (r, q) of board b lies in a [B,8,8,channels] buffer.
inline int64_t square_at(int64_t channels, int64_t b, int r, int q, int c) {
  return ((b * BOARD + r) * BOARD + q) * channels + c;
}

// The four transforms, each one tile (TY, TX: compile-time, so that the border's zeros fold
// away) and one block of channels (Vec) at a time.
// Forward, input: x [B,8,8,C] -> V [A*A, N, C], V = BT d BT^T.
struct InputTransform {
  static int64_t channels(const Shape& s) { return s.channels_in; }
  template <int M, int TY, int TX, typename Vec>
  [[gnu::always_inline]] static void block(const float* x, float* V, const Shape& s, int64_t b, int c) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    const float* board = x + square_at(s.channels_in, b, 0, 0, c);
    const int64_t C = s.channels_in, step = position_step<M>(s, s.stride_in);
    float* out = V + tile_base<M>(s.stride_in, b, TY, TX, c);
    const auto live_row = [](int a) WINOGRAD_INLINE { return on_board(window_line<M>(TY, a)); };
    const auto live_col = [](int e) WINOGRAD_INLINE { return on_board(window_line<M>(TX, e)); };
    const auto in = [&](int a, int e) WINOGRAD_INLINE {
      return load<Vec>(board + (window_line<M>(TY, a) * BOARD + window_line<M>(TX, e)) * C);
    };
    const auto put = [&](int i, int j, Vec v) WINOGRAD_INLINE { store(out + (i * A + j) * step, v); };
    const auto bt = [](int i, int a) WINOGRAD_INLINE { return W::BT[i][a]; };
    sandwich<A, A, A, A, Vec>(in, put, bt, bt, live_row, live_col);
  }
};

// Forward, output: the products Mm [A*A, N, K] -> y [B,8,8,K], y = AT m AT^T.
struct OutputTransform {
  static int64_t channels(const Shape& s) { return s.channels_out; }
  template <int M, int TY, int TX, typename Vec>
  [[gnu::always_inline]] static void block(const float* Mm, float* y, const Shape& s, int64_t b, int k) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    const int64_t K = s.channels_out, step = position_step<M>(s, s.stride_out);
    const float* m = Mm + tile_base<M>(s.stride_out, b, TY, TX, k);
    float* board = y + square_at(K, b, TY * M, TX * M, k);
    const auto in = [&](int i, int j) WINOGRAD_INLINE { return load<Vec>(m + (i * A + j) * step); };
    const auto put = [&](int r, int q, Vec v) WINOGRAD_INLINE { store(board + (r * BOARD + q) * K, v); };
    const auto at = [](int r, int i) WINOGRAD_INLINE { return W::AT[r][i]; };
    sandwich<M, A, A, M, Vec>(in, put, at, at, EVERY_LINE, EVERY_LINE);
  }
};

// Backward, the output transform's transpose: gy [B,8,8,K] -> gM [A*A, N, K], gM = AT^T gY AT.
struct OutputGradient {
  static int64_t channels(const Shape& s) { return s.channels_out; }
  template <int M, int TY, int TX, typename Vec>
  [[gnu::always_inline]] static void block(const float* gy, float* gM, const Shape& s, int64_t b, int k) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    const int64_t K = s.channels_out, step = position_step<M>(s, s.stride_out);
    const float* board = gy + square_at(K, b, TY * M, TX * M, k);
    float* out = gM + tile_base<M>(s.stride_out, b, TY, TX, k);
    const auto in = [&](int r, int q) WINOGRAD_INLINE { return load<Vec>(board + (r * BOARD + q) * K); };
    const auto put = [&](int i, int j, Vec v) WINOGRAD_INLINE { store(out + (i * A + j) * step, v); };
    const auto at_t = [](int i, int r) WINOGRAD_INLINE { return W::AT[r][i]; };
    sandwich<A, M, M, A, Vec>(in, put, at_t, at_t, EVERY_LINE, EVERY_LINE);
  }
};

// Whether tile (ty, tx) is the first, in the order the tiles are visited (row-major), whose
// input window covers square (r, q) of the board: that tile stores the square's gradient, the
// later ones add to it.
template <int M>
constexpr bool first_cover(int ty, int tx, int r, int q) {
  constexpr int T = BOARD / M;
  const auto covers = [](int t, int x) WINOGRAD_INLINE {
    return window_line<M>(t, 0) <= x && x <= window_line<M>(t, Winograd<M>::A - 1);
  };
  for (int y = 0; y < T; ++y)
    for (int x = 0; x < T; ++x) {
      if (y == ty && x == tx) return true;
      if (covers(y, r) && covers(x, q)) return false;
    }
  return true;
}

// Backward, the input transform's transpose: gV [A*A, N, C] -> the tile's gd = BT^T gV BT, into
// the board's gradient gx [B,8,8,C]: neighbouring tiles' windows overlap by 2 rows or columns,
// so the first tile to cover a square stores it and the others add (every square of the board
// is covered, so gx needs no zeroing); the window's squares off the board are not computed.
struct InputGradient {
  static int64_t channels(const Shape& s) { return s.channels_in; }
  template <int M, int TY, int TX, typename Vec>
  [[gnu::always_inline]] static void block(const float* gV, float* gx, const Shape& s, int64_t b, int c) {
    using W = Winograd<M>;
    constexpr int A = W::A;
    const int64_t C = s.channels_in, step = position_step<M>(s, s.stride_in);
    const float* g = gV + tile_base<M>(s.stride_in, b, TY, TX, c);
    float* board = gx + square_at(C, b, 0, 0, c);
    const auto in = [&](int i, int j) WINOGRAD_INLINE { return load<Vec>(g + (i * A + j) * step); };
    const auto put = [&](int a, int e, Vec v) WINOGRAD_INLINE {
      const int r = window_line<M>(TY, a), q = window_line<M>(TX, e);
      if (!on_board(r) || !on_board(q)) return;
      float* p = board + (r * BOARD + q) * C;
      store(p, first_cover<M>(TY, TX, r, q) ? v : load<Vec>(p) + v);
    };
    const auto bt_t = [](int a, int i) WINOGRAD_INLINE { return W::BT[i][a]; };
    sandwich<A, A, A, A, Vec>(in, put, bt_t, bt_t, EVERY_LINE, EVERY_LINE);
  }
};

// The channels of one tile in blocks of the widest vector first, then the narrower ones
// (AVX-512: 16, then 8, then 1 at a time).
template <class Transform, int M, int TY, int TX, typename Vec, typename... Narrower>
[[gnu::always_inline]] inline void channel_blocks(const float* in, float* out, const Shape& s, int64_t b, int& c,
                                                  int channels) {
  for (; c + lanes<Vec>() <= channels; c += lanes<Vec>()) Transform::template block<M, TY, TX, Vec>(in, out, s, b, c);
  if constexpr (sizeof...(Narrower) > 0) channel_blocks<Transform, M, TY, TX, Narrower...>(in, out, s, b, c, channels);
}

// Tile number Tile of board b, its position a compile-time constant.
template <class Transform, int M, int Tile, typename... Vecs>
[[gnu::always_inline]] inline void one_tile(const float* in, float* out, const Shape& s, int64_t b) {
  constexpr int T = BOARD / M;
  int c = 0;
  channel_blocks<Transform, M, Tile / T, Tile % T, Vecs..., float>(in, out, s, b, c, int(Transform::channels(s)));
}
template <class Transform, int M, typename... Vecs, int... Tiles>
[[gnu::always_inline]] inline void board_tiles(const float* in, float* out, const Shape& s, int64_t b,
                                               std::integer_sequence<int, Tiles...>) {
  (one_tile<Transform, M, Tiles, Vecs...>(in, out, s, b), ...);
}
template <class Transform, int M, typename... Vecs>
[[gnu::always_inline]] inline void board_tiles(const float* in, float* out, const Shape& s, int64_t b) {
  constexpr int T = BOARD / M;
  board_tiles<Transform, M, Vecs...>(in, out, s, b, std::make_integer_sequence<int, T * T>{});
}

// A pass over boards [b0, b1).
template <class Transform, int M, typename... Vecs>
[[gnu::always_inline]] inline void boards(const float* in, float* out, const Shape& shape, int64_t b0, int64_t b1) {
  // A copy whose address never escapes: the vector stores (memcpy, which may alias anything)
  // would otherwise make the compiler reload the sizes after each of them.
  const Shape s = shape;
  for (int64_t b = b0; b < b1; ++b) board_tiles<Transform, M, Vecs...>(in, out, s, b);
}

#undef WINOGRAD_INLINE

}  // namespace legalnet::nn::winograd
