// Binary cross-entropy with logits, one batch row at a time, for the training loss on a CPU
// (nn/loss.cpp through kernels.h): the logits are read where the net wrote them and the targets
// at the trained move indices, so the loss needs no gather, no cast and no scatter of its own;
// one vectorised pass gives each row's loss and the gradient of each logit. No torch.
#pragma once

#include <cstdint>

#include "kernels/cpu_isa.h"

namespace legalnet::nn {

// One row's inputs. Logit k is scores[columns[k]], its target targets[target_columns[k]]; both
// column lists hold indices the caller has checked against the rows' widths.
struct BceRow {
  const void* scores;  // float, or bf16 (the upper 16 bits of a float) when bf16
  bool bf16 = false;
  const int64_t* columns;
  const float* targets;
  const int64_t* target_columns;
  int64_t k;  // logits in the row
  // Each logit z is scored as z - margin (2t - 1): a legal move as if margin logits less sure,
  // an illegal one as if margin logits less sure that it is not (train --logit-margin: nn/loss.h).
  float margin = 0;
};

// The floats bce_row's `work` needs for k logits.
int64_t bce_row_work(int64_t k);

// sum_k softplus(z) - t z (= BCE(sigmoid(z), t)) over the row, and gradient[k] = sigmoid(z) - t
// (when gradient is not null), z the logit less its margin. softplus and sigmoid come from one
// exp(-|z|) (a polynomial, as Cephes' expf) and log1p from its series, within a few float
// roundings of std::log1p and std::exp; the sum is kept in double every 16 vectors. A logit that
// is not finite makes the row's loss NaN (train stops on it). The same result for every `isa` up
// to float rounding.
double bce_row(BoardIsa isa, const BceRow& row, float* work, float* gradient);

}  // namespace legalnet::nn
