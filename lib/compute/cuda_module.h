// liblegalnet_cuda.so: the part of legalnet that links libtorch_cuda, in a module of its own that
// the tools load only where a run may use a GPU (compute/device.cpp). Linked into every tool,
// libtorch_cuda and the CUDA libraries it needs (cuBLAS, cuDNN, NCCL, ...) cost each start about
// 0.45 s and 390 MB of memory on a machine without a GPU, and a start is what every command, a
// refused option and a UCI engine's launch, pays. Loading the module runs libtorch_cuda's
// static initialisers, which register torch's CUDA backend; its one function makes c10d's NCCL
// process group, whose class lives in libtorch_cuda.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <string>

namespace c10d {
class Backend;
class Store;
}  // namespace c10d

namespace legalnet::nn {

// The module's file name; it lies beside the executables that load it.
inline constexpr const char* CUDA_MODULE_FILE = "liblegalnet_cuda.so";

// The NCCL process group of `rank` among `size` processes, rendezvous through `store`; nullptr
// where this libtorch has no NCCL. Exported unmangled under the name NCCL_GROUP_FUNCTION.
using NcclGroupFunction = c10::intrusive_ptr<c10d::Backend> (*)(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                                int size);
inline constexpr const char* NCCL_GROUP_FUNCTION = "legalnet_nccl_group";

// The module's handle, loading it (and libtorch_cuda) on the first call: nullptr where it cannot
// load (a build without CUDA, no NVIDIA driver on the machine, the file missing), with the
// reason in `why` when given. Call it before anything asks torch about CUDA: torch keeps the
// first answer of its CUDA registry for the process (nn::pick_device does, first thing).
// Defined in compute/device.cpp, beside the driver's checks; the module itself defines only the above.
void* cuda_module(std::string* why = nullptr);

}  // namespace legalnet::nn
