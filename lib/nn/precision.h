// The arithmetic a network runs in. bf16 autocast runs matmuls and convolutions in bfloat16
// (oneDNN's AVX-512 BF16 / AMX kernels on a CPU, tensor cores on a GPU) while the weights, the
// optimizer state and the loss stay fp32; on this project's CPU about twice as fast as torch's fp32
// kernels, slower than the resnet's fp32 board kernels (resolve_precision).
// tf32 (CUDA only) keeps fp32 tensors but lets cuBLAS and cuDNN multiply in TensorFloat-32;
// fp32 on CUDA is strict IEEE fp32.
#pragma once

#include <torch/torch.h>

#include <string>

#include "nn/precision_choice.h"

namespace legalnet::nn {

class PolicyNet;

// Whether this CPU computes bf16 natively: AVX512-BF16 or AMX-BF16 (cpuid).
bool cpu_has_native_bf16();

// FP32, TF32 (CUDA only), BF16, or for AUTO: TF32 on a CUDA device; on a CPU, BF16 where it
// computes bf16 natively, FP32 elsewhere, except that `board_kernels` (the net's 3x3
// convolutions will run on the board kernels in fp32: a resnet trained with --kernels auto or
// board) keeps FP32 on a CPU without AMX: there our fp32 Winograd step beat bf16 autocast
// (docs/benchmarks.md, issue 32). Throws legalnet::Error for TF32 on a CPU.
Precision resolve_precision(Precision choice, const torch::Device& device, bool board_kernels = false);
// The same by name (PRECISIONS); throws legalnet::Error for another name.
inline Precision resolve_precision(std::string_view name, const torch::Device& device, bool board_kernels = false) {
  return resolve_precision(parse_precision(name), device, board_kernels);
}

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

// Channels-last weights for a net with convolutions, where oneDNN runs them faster in either
// precision (resnet 6x32 on this project's CPU: 1.23x in fp32, 1.20x in bf16,
// docs/benchmarks.md); nothing for a net without.
void choose_memory_format(PolicyNet& net);

// `planes` in the memory layout the net's forward pass takes (channels-last for a net that
// keeps its convolutions so).
torch::Tensor in_net_layout(const PolicyNet& net, const torch::Tensor& planes);

// The net's logits for `planes` computed in `precision`, returned as fp32 (the loss and the
// probabilities are always computed in fp32).
torch::Tensor forward_logits(PolicyNet& net, const torch::Tensor& planes, Precision precision);

// The same for another of the net's forward functions (PolicyNet::forward_trained).
torch::Tensor forward_logits_of(PolicyNet& net, const torch::Tensor& planes, Precision precision,
                                torch::Tensor (PolicyNet::*forward)(torch::Tensor));

}  // namespace legalnet::nn
