// The --precision choices by name, without torch (the command line reads them): the arithmetic
// a net's forward pass runs in (nn/precision.h runs it). AUTO is resolved per device before a
// net runs: tf32 on CUDA, bf16 on CPUs with native bf16, fp32 elsewhere.
#pragma once

#include <array>
#include <string_view>

#include "util/choices.h"

namespace legalnet::nn {

enum class Precision { AUTO, FP32, TF32, BF16 };

struct PrecisionSpec {
  Precision value;
  const char* name;  // --precision, options.json's and report.json's "compute_precision"
};

inline constexpr std::array<PrecisionSpec, 4> PRECISIONS{{
    {Precision::AUTO, "auto"},
    {Precision::FP32, "fp32"},
    {Precision::TF32, "tf32"},
    {Precision::BF16, "bf16"},
}};

inline const char* precision_name(Precision p) { return choice_of(PRECISIONS, p).name; }
// Throws legalnet::Error "unknown precision 'x' (expected auto | fp32 | tf32 | bf16)".
inline Precision parse_precision(std::string_view name) { return find_choice(PRECISIONS, name, "precision").value; }

}  // namespace legalnet::nn
