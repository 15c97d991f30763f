// liblegalnet_cuda.so (compute/cuda_module.h): linked against libtorch_cuda, loaded by compute/device.cpp.
#include "compute/cuda_module.h"

#if defined(LEGALNET_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#else
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

extern "C" __attribute__((visibility("default"))) c10::intrusive_ptr<c10d::Backend> legalnet_nccl_group(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size) {
#if defined(LEGALNET_NCCL)
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size);
#else
  (void)store, (void)rank, (void)size;
  return {};
#endif
}

// The declared type and the definition agree (a mismatch is a compile error, not a crash).
static_assert(std::is_same_v<decltype(&legalnet_nccl_group), legalnet::nn::NcclGroupFunction>);
