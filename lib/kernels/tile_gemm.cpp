#include "kernels/tile_gemm.h"

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

// The kernels, once per instruction set: tile_gemm_kernel.inc inside `#pragma GCC target`, in
// a namespace of its own. (GCC compiles a template's vector code for the target in effect where
// the template is defined: with the templates outside such a region and only the calling
// function marked, A's broadcast became an add and a shuffle, or a chain of inserts, where
// inside it is one vbroadcastss from memory: 81 and 42 against 111 GFLOP/s on one Zen 4 core,
// docs/benchmarks.md, issue 32.) Rows x vectors of C in registers: AVX-512 8 x 2 (16 of 32
// registers accumulate), AVX2+FMA 6 x 2 (12 of 16), SSE 4 x 2 (8 of 16).
#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
constexpr int LANES = 16, ROWS = 8;
#include "kernels/tile_gemm_kernel.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
constexpr int LANES = 8, ROWS = 6;
#include "kernels/tile_gemm_kernel.inc"
}  // namespace avx2
#pragma GCC pop_options

namespace sse {
constexpr int LANES = 4, ROWS = 4;
#include "kernels/tile_gemm_kernel.inc"
}  // namespace sse

std::atomic<int> isa_cap{int(BoardIsa::AVX512)};

// ONEDNN_MAX_CPU_ISA in capitals (oneDNN's names: SSE41, AVX, AVX2, AVX2_VNNI, AVX512_CORE,
// AVX512_CORE_BF16, AVX512_CORE_AMX, ..., ALL), or "" where it is not set.
std::string onednn_max_isa() {
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  std::string s(isa == nullptr ? "" : isa);
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s == "DEFAULT" ? "ALL" : s;
}

bool onednn_below_avx512() {
  const std::string s = onednn_max_isa();
  return !s.empty() && s.rfind("AVX512", 0) != 0 && s.rfind("AVX10", 0) != 0 && s != "ALL";
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

bool onednn_allows(CpuFeature feature) {
  const std::string s = onednn_max_isa();
  if (s.empty() || s == "ALL") return true;
  const bool amx = s.find("AMX") != std::string::npos;
  if (feature == CpuFeature::AMX_BF16) return amx;
  return amx || s.rfind("AVX10", 0) == 0 || s.find("BF16") != std::string::npos || s.find("FP16") != std::string::npos;
}

BoardIsa board_isa() { return BoardIsa(std::min(int(cpu_isa()), isa_cap.load())); }

void board_isa_cap(BoardIsa cap) { isa_cap = int(cap); }

void tile_gemm(BoardIsa isa, int rows, int depth, int n, const TileOperand& ab, float* c, int64_t ldc,
               bool accumulate) {
  switch (isa) {
    case BoardIsa::AVX512: return avx512::gemm(rows, depth, n, ab, c, ldc, accumulate);
    case BoardIsa::AVX2: return avx2::gemm(rows, depth, n, ab, c, ldc, accumulate);
    case BoardIsa::BASELINE: break;
  }
  sse::gemm(rows, depth, n, ab, c, ldc, accumulate);
}

}  // namespace legalnet::nn
