// The arithmetic a network runs in, decided in one place. The policy, for --precision auto and
// --kernels auto (docs/results.md and docs/benchmarks.md hold the measurements behind it):
// - on CUDA: TF32 (fp32 tensors, TensorFloat-32 matmuls), torch's kernels;
// - on a CPU, a resnet (the one kind with 3x3 convolutions) runs fp32 on our board kernels
//   (kernels/kernels.h) where they exist (AVX2 or better) and the CPU has no AMX: there they
//   beat bf16 autocast;
// - on a CPU otherwise: bf16 autocast where the CPU computes bf16 natively (AVX512-BF16 or AMX),
//   fp32 elsewhere; in bf16 the board kernels take the weight gradient on AVX512-BF16 without
//   AMX (with AMX oneDNN's kernels use the tile unit, which ours do not), torch's otherwise.
// bf16 autocast runs matmuls and convolutions in bfloat16 while the weights, the optimizer state
// and the loss stay fp32; fp32 on CUDA is strict IEEE fp32.
#pragma once

#include <torch/torch.h>

#include <string_view>

#include "compute/choices.h"

namespace legalnet::nn {

// Whether this CPU computes bf16 natively: AVX512-BF16 or AMX-BF16 (cpuid).
bool cpu_has_native_bf16();

// The precision the policy gives `choice` on `device`; `board_kernels`: the net's 3x3
// convolutions would run on the board kernels. Throws legalnet::Error for TF32 on a CPU.
Precision resolve_precision(Precision choice, const torch::Device& device, bool board_kernels = false);
// The same by name (PRECISIONS); throws legalnet::Error for another name.
inline Precision resolve_precision(std::string_view name, const torch::Device& device, bool board_kernels = false) {
  return resolve_precision(parse_precision(name), device, board_kernels);
}

// The kernels the policy gives `asked` on `device` in `precision` (TORCH and BOARD stay).
Kernels resolve_kernels(Kernels asked, const torch::Device& device, Precision precision);

// Both, as train and evaluate resolve them for a net: auto's precision follows whether the net's
// 3x3 convolutions will run on the board kernels, then auto's kernels follow the precision.
// `board_convolutions`: the net's kind has convolutions the board kernels take (ModelSpec's
// board_convolutions: the resnet's, ResNetImpl::use_kernels); a net without gets TORCH, what runs.
struct Arithmetic {
  Precision precision;
  Kernels kernels;
};
Arithmetic resolve_arithmetic(Precision precision, Kernels kernels, bool board_convolutions,
                              const torch::Device& device);

// Autocast to bf16 on `device` while alive (nothing for fp32); nests, and restores the
// previous state. Autocast state belongs to the thread that makes the scope.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_;
  c10::DeviceType device_type_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

}  // namespace legalnet::nn
