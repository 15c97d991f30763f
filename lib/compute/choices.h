// The arithmetic choices by name, without torch (the command lines read them): --precision, what
// a net's forward pass computes in, and --kernels, who computes a resnet's 3x3 convolutions on a
// CPU (torch's oneDNN, or ours for 8x8 boards: kernels/kernels.h). AUTO is resolved per device
// and CPU before a net runs, by the one policy of compute/arithmetic.h.
#pragma once

#include <array>
#include <string_view>

#include "util/choices.h"

namespace legalnet::nn {

enum class Precision { AUTO, FP32, TF32, BF16 };

// --precision, options.json's and report.json's "compute_precision".
inline constexpr std::array<Choice<Precision>, 4> PRECISIONS{{
    {Precision::AUTO, "auto"},
    {Precision::FP32, "fp32"},
    {Precision::TF32, "tf32"},
    {Precision::BF16, "bf16"},
}};

inline const char* precision_name(Precision p) { return choice_of(PRECISIONS, p).name; }
// Throws legalnet::Error "unknown precision 'x' (expected auto | fp32 | tf32 | bf16)".
inline Precision parse_precision(std::string_view name) { return find_choice(PRECISIONS, name, "precision").value; }

enum class Kernels { AUTO, TORCH, BOARD };

// --kernels, options.json's "kernels".
inline constexpr std::array<Choice<Kernels>, 3> KERNELS{{
    {Kernels::AUTO, "auto"},
    {Kernels::TORCH, "torch"},
    {Kernels::BOARD, "board"},
}};

inline const char* kernels_name(Kernels k) { return choice_of(KERNELS, k).name; }

}  // namespace legalnet::nn
