// The small matrix products of the board kernels (board_conv.cpp): C (+)= A B for one
// transform-domain position of a block of tiles, A [rows x depth] read with any strides (so that
// A^T needs no copy), B [depth x n] and C [rows x n] row-major, n a multiple of 16 (the board
// kernels pad their channels to 16). Small enough to stay in L1/L2 with the transforms around
// them, where one batched matmul over the whole batch streams every operand through memory
// (issue 32: MKL's batched 36 x [1024,32]x[32,32] ran at half the machine's FMA rate). No torch.
#pragma once

#include <cstdint>

#include "kernels/cpu_isa.h"

namespace legalnet::nn {

constexpr int TILE_GEMM_COLUMNS = 16;  // n and ldb/ldc are multiples of this

struct TileOperand {
  const float* a;
  int64_t a_row, a_depth;  // A(r, d) = a[r * a_row + d * a_depth]
  const float* b;          // [depth][ldb]
  int64_t ldb;
};

// C[r][0..n) = (accumulate ? C[r][0..n) : 0) + sum_d A(r, d) B[d][0..n), for r < rows.
void tile_gemm(BoardIsa isa, int rows, int depth, int n, const TileOperand& ab, float* c, int64_t ldc, bool accumulate);

}  // namespace legalnet::nn
