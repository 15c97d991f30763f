#include "nn/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <fstream>
#include <sstream>

#include "nn/models.h"
#include "util/error.h"

// libtorch 2.4 replaced the per-device autocast functions (set_cpu_enabled,
// set_autocast_cpu_dtype, ...) by ones that take the device type.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define LEGALNET_AUTOCAST_BY_DEVICE_TYPE 1
#endif

namespace legalnet::nn {
namespace {

bool autocast_enabled(c10::DeviceType type) {
#ifdef LEGALNET_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

at::ScalarType autocast_dtype(c10::DeviceType type) {
#ifdef LEGALNET_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::get_autocast_dtype(type);
#else
  return type == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                       : at::autocast::get_autocast_cpu_dtype();
#endif
}

void set_autocast(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
#ifdef LEGALNET_AUTOCAST_BY_DEVICE_TYPE
  at::autocast::set_autocast_enabled(type, enabled);
  at::autocast::set_autocast_dtype(type, dtype);
#else
  if (type == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

}  // namespace

const char* precision_name(Precision p) { return p == Precision::BF16 ? "bf16" : "fp32"; }

bool cpu_has_native_bf16() {
  static const bool native = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream flags(line);
      for (std::string flag; flags >> flag;)
        if (flag == "avx512_bf16" || flag == "amx_bf16") return true;
      return false;
    }
    return false;
  }();
  return native;
}

Precision resolve_precision(const std::string& spec, const torch::Device& device) {
  if (spec == "fp32") return Precision::FP32;
  if (spec == "bf16") return Precision::BF16;
  if (spec == "auto") return device.is_cuda() || cpu_has_native_bf16() ? Precision::BF16 : Precision::FP32;
  throw Error("--precision " + spec + ": expected " + PRECISION_CHOICES);
}

AutocastScope::AutocastScope(Precision precision, const torch::Device& device)
    : active_(precision == Precision::BF16), device_type_(device.type()) {
  if (!active_) return;
  previous_enabled_ = autocast_enabled(device_type_);
  previous_dtype_ = autocast_dtype(device_type_);
  set_autocast(device_type_, true, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache holds bf16 copies of the weights for this forward pass; they change each step.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast(device_type_, previous_enabled_, previous_dtype_);
}

void choose_memory_format(PolicyNet& net) {
  for (const auto& p : net.parameters())
    if (p.dim() == 4) {
      net.use_channels_last();
      return;
    }
}

torch::Tensor forward_logits_of(PolicyNet& net, const torch::Tensor& planes, Precision precision,
                                torch::Tensor (PolicyNet::*forward)(torch::Tensor)) {
  torch::Tensor logits;
  {
    AutocastScope autocast(precision, planes.device());
    logits = (net.*forward)(net.channels_last() ? planes.contiguous(torch::MemoryFormat::ChannelsLast) : planes);
  }
  return logits.to(torch::kFloat32);
}

torch::Tensor forward_logits(PolicyNet& net, const torch::Tensor& planes, Precision precision) {
  return forward_logits_of(net, planes, precision, &PolicyNet::forward);
}

}  // namespace legalnet::nn
