#include "compute/arithmetic.h"

#include <ATen/autocast_mode.h>

#include "kernels/kernels.h"
#include "util/error.h"

namespace legalnet::nn {
namespace {

void set_autocast(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
  at::autocast::set_autocast_enabled(type, enabled);
  at::autocast::set_autocast_dtype(type, dtype);
}

}  // namespace

bool cpu_has_native_bf16() { return cpu_has_avx512_bf16() || cpu_has_amx_bf16(); }

Precision resolve_precision(Precision choice, const torch::Device& device, bool board_kernels) {
  if (choice == Precision::TF32 && !device.is_cuda())
    throw Error("--precision tf32: TF32 is a CUDA tensor-core format; on " + device.str() + " use fp32 or bf16");
  // On CUDA, TF32: on an H200 it was 0.87-1.05x fp32 for the small default nets (launch-bound
  // steps), 4.6x for a 10x128 resnet, and at least as fast as bf16 autocast on all five measured
  // (docs/benchmarks.md, "The second GPU run"), with fp32 tensors throughout.
  if (choice == Precision::AUTO) {
    if (device.is_cuda()) return Precision::TF32;
    // With the board kernels, fp32 was 1.06x bf16 in train and 1.10x a step on a Zen 4 with
    // AVX-512 BF16, and make all met the default's bars in fp32 (docs/benchmarks.md);
    // with AMX, oneDNN's bf16 kernels use the tile unit, which ours do not (not measured: bf16).
    if (board_kernels && !cpu_has_amx_bf16() &&
        resolve_kernels(Kernels::AUTO, device, Precision::FP32) == Kernels::BOARD)  // where they run in fp32
      return Precision::FP32;
    return cpu_has_native_bf16() ? Precision::BF16 : Precision::FP32;
  }
  return choice;
}

AutocastScope::AutocastScope(Precision precision, const torch::Device& device)
    : active_(precision == Precision::BF16), device_type_(device.type()) {
  if (!active_) return;
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  set_autocast(device_type_, true, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache holds bf16 copies of the weights for this forward pass; they change each step.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(device_type_, previous_enabled_, previous_dtype_);
}

Kernels resolve_kernels(Kernels asked, const torch::Device& device, Precision precision) {
  if (asked != Kernels::AUTO) return asked;
  if (!device.is_cpu()) return Kernels::TORCH;
  if (precision == Precision::FP32) return board_isa() >= BoardIsa::AVX2 ? Kernels::BOARD : Kernels::TORCH;
  // bf16: ours is the weight gradient on AVX512-BF16; with AMX, oneDNN's brgemm kernels use the
  // tile unit, which ours does not (not measured there, so torch's).
  return precision == Precision::BF16 && has_bf16_weight_gradient() && !cpu_has_amx_bf16() ? Kernels::BOARD
                                                                                           : Kernels::TORCH;
}

Arithmetic resolve_arithmetic(Precision precision, Kernels kernels, bool board_convolutions,
                              const torch::Device& device) {
  const bool board = board_convolutions && kernels != Kernels::TORCH;
  const Precision resolved = resolve_precision(precision, device, board);
  return {resolved, board ? resolve_kernels(kernels, device, resolved) : Kernels::TORCH};
}

}  // namespace legalnet::nn
