// The --kernels choices by name, without torch (the command line reads them): who computes a
// resnet's 3x3 convolutions on a CPU in fp32. torch: torch's convolution (oneDNN); board: our
// Winograd F(4x4,3x3) kernels for 8x8 boards (nn/board_conv.h); auto: board where they run
// (a CPU, fp32, AVX2 or better: faster there, docs/benchmarks.md), else torch
// (nn::resolve_kernels). CUDA, bf16 and other layers always run torch's.
#pragma once

#include <array>
#include <string_view>

#include "util/choices.h"

namespace legalnet::nn {

enum class Kernels { AUTO, TORCH, BOARD };

struct KernelsSpec {
  Kernels value;
  const char* name;  // --kernels, options.json's "kernels"
};

inline constexpr std::array<KernelsSpec, 3> KERNELS{{
    {Kernels::AUTO, "auto"},
    {Kernels::TORCH, "torch"},
    {Kernels::BOARD, "board"},
}};

inline const char* kernels_name(Kernels k) { return choice_of(KERNELS, k).name; }

}  // namespace legalnet::nn
