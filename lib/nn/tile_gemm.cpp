#include "nn/tile_gemm.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

// The vector helpers are always inlined: the ABI of passing vectors does not matter to them.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace legalnet::nn {

namespace {

// One register block: R rows of C by NV vectors of columns, summed over the whole depth in
// registers (R x NV accumulators: enough independent FMAs to cover their latency, few enough to
// leave registers for B's vectors and A's broadcast). Vec's operations come from Ops.
template <typename Ops, int R, int NV>
[[gnu::always_inline]] inline void block(int depth, const TileOperand& ab, int64_t row, int64_t col, float* c,
                                         int64_t ldc, bool accumulate) {
  using V = typename Ops::Vec;
  constexpr int L = Ops::LANES;
  V s[R][NV];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      s[r][v] = accumulate ? Ops::load(c + (row + r) * ldc + col + v * L) : Ops::zero();
  const float* a = ab.a + row * ab.a_row;
  const float* b = ab.b + col;
  for (int d = 0; d < depth; ++d, a += ab.a_depth, b += ab.ldb) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = Ops::load(b + v * L);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const V av = Ops::broadcast(a[r * ab.a_row]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) s[r][v] = Ops::fma(av, bv[v], s[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) Ops::store(c + (row + r) * ldc + col + v * L, s[r][v]);
}

// Every block of C: columns in steps of NV vectors (a last step of one vector where n needs
// it), rows in steps of R, then one at a time.
template <typename Ops, int R, int NV>
[[gnu::always_inline]] inline void gemm(int rows, int depth, int n, const TileOperand& ab, float* c, int64_t ldc,
                                        bool accumulate) {
  constexpr int L = Ops::LANES;
  int col = 0;
  for (; col + NV * L <= n; col += NV * L) {
    int row = 0;
    for (; row + R <= rows; row += R) block<Ops, R, NV>(depth, ab, row, col, c, ldc, accumulate);
    for (; row < rows; ++row) block<Ops, 1, NV>(depth, ab, row, col, c, ldc, accumulate);
  }
  for (; col < n; col += L) {
    int row = 0;
    for (; row + R <= rows; row += R) block<Ops, R, 1>(depth, ab, row, col, c, ldc, accumulate);
    for (; row < rows; ++row) block<Ops, 1, 1>(depth, ab, row, col, c, ldc, accumulate);
  }
}

// Vectors of 16, 8 and 4 floats: GCC's vector extensions, compiled to AVX-512, AVX2 or SSE by
// the target of the function they are inlined into (intrinsics would need that target on every
// inlined helper). `a * b + c` becomes one FMA: this file is built with -ffp-contract=fast.
template <int N>
struct Lanes {
  typedef float Vec __attribute__((vector_size(N * sizeof(float))));
  static constexpr int LANES = N;
  [[gnu::always_inline]] static Vec zero() { return Vec{}; }
  [[gnu::always_inline]] static Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  [[gnu::always_inline]] static void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
  [[gnu::always_inline]] static Vec broadcast(float x) { return Vec{} + x; }
  [[gnu::always_inline]] static Vec fma(Vec a, Vec b, Vec c) { return a * b + c; }
};
using Avx512 = Lanes<16>;
using Avx2 = Lanes<8>;
using Sse = Lanes<4>;

// AVX-512: 8 rows x 32 columns, 16 of the 32 registers accumulate. AVX2: 4 rows x 16 columns,
// 8 of 16. SSE: 4 rows x 8 columns, 8 of 16.
[[gnu::target("avx512f")]] void gemm_avx512(int rows, int depth, int n, const TileOperand& ab, float* c,
                                            int64_t ldc, bool accumulate) {
  gemm<Avx512, 8, 2>(rows, depth, n, ab, c, ldc, accumulate);
}
[[gnu::target("avx2,fma")]] void gemm_avx2(int rows, int depth, int n, const TileOperand& ab, float* c, int64_t ldc,
                                           bool accumulate) {
  gemm<Avx2, 4, 2>(rows, depth, n, ab, c, ldc, accumulate);
}
void gemm_sse(int rows, int depth, int n, const TileOperand& ab, float* c, int64_t ldc, bool accumulate) {
  gemm<Sse, 4, 2>(rows, depth, n, ab, c, ldc, accumulate);
}

std::atomic<int> isa_cap{int(BoardIsa::AVX512)};

// Whether ONEDNN_MAX_CPU_ISA (oneDNN's names: SSE41, AVX, AVX2, AVX2_VNNI, AVX512_CORE, ...,
// ALL) keeps oneDNN below AVX-512.
bool onednn_below_avx512() {
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (isa == nullptr || *isa == 0) return false;
  std::string s(isa);
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s.rfind("AVX512", 0) != 0 && s.rfind("AVX10", 0) != 0 && s != "ALL" && s != "DEFAULT";
}

BoardIsa cpu_isa() {
  static const BoardIsa isa = [] {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return BoardIsa::BASELINE;
    if (!__builtin_cpu_supports("avx512f") || onednn_below_avx512()) return BoardIsa::AVX2;
    return BoardIsa::AVX512;
  }();
  return isa;
}

}  // namespace

const char* board_isa_name(BoardIsa isa) {
  switch (isa) {
    case BoardIsa::AVX512: return "AVX-512";
    case BoardIsa::AVX2: return "AVX2+FMA";
    case BoardIsa::BASELINE: break;
  }
  return "SSE";
}

BoardIsa board_isa() { return BoardIsa(std::min(int(cpu_isa()), isa_cap.load())); }

void board_isa_cap(BoardIsa cap) { isa_cap = int(cap); }

void tile_gemm(BoardIsa isa, int rows, int depth, int n, const TileOperand& ab, float* c, int64_t ldc,
               bool accumulate) {
  switch (isa) {
    case BoardIsa::AVX512: return gemm_avx512(rows, depth, n, ab, c, ldc, accumulate);
    case BoardIsa::AVX2: return gemm_avx2(rows, depth, n, ab, c, ldc, accumulate);
    case BoardIsa::BASELINE: break;
  }
  gemm_sse(rows, depth, n, ab, c, ldc, accumulate);
}

}  // namespace legalnet::nn
