// The --kernels choices by name, without torch (the command line reads them): who computes a
// resnet's 3x3 convolutions on a CPU. torch: torch's convolution (oneDNN); board: our kernels
// for 8x8 boards (nn/board_conv.h): in fp32 Winograd F(4x4,3x3), in bf16 the weight gradient
// (AVX512-BF16); auto: board where they were measured faster (a CPU in fp32 with AVX2 or better,
// in bf16 with AVX512-BF16 and no AMX: docs/benchmarks.md), else torch (nn::resolve_kernels).
// CUDA and other layers always run torch's.
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
