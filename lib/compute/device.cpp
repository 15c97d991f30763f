#include "compute/device.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compute/cuda_module.h"
#include "util/error.h"
#include "util/thread_pool.h"
#include "util/version.h"

namespace legalnet::nn {

namespace {

const char* const NO_CUDA_BUILD = "this build of legalnet has no CUDA (its libtorch was built without it)";
const char* const NO_DRIVER = "the NVIDIA driver is missing (libcuda.so.1 cannot be loaded)";

// The NVIDIA driver's library, opened once; nullptr where the machine has none.
void* nvidia_driver() {
  static void* const driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return driver;
}

// What keeps the driver from running a GPU ("" when one is visible): asked of the driver itself
// (cuInit, cuDeviceGetCount), before torch, which reports only "false" and prints a warning of
// several lines where cuInit fails.
std::string ask_driver() {
  void* driver = nvidia_driver();
  if (!driver) return NO_DRIVER;
  using CuInit = int (*)(unsigned);
  using CuDeviceGetCount = int (*)(int*);
  auto cu_init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto cu_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  if (!cu_init || !cu_count) return "the NVIDIA driver (libcuda.so.1) lacks cuInit";
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string visible_note = visible ? std::string(" (CUDA_VISIBLE_DEVICES='") + visible + "')" : std::string();
  int count = 0;
  if (const int status = cu_init(0); status == 100)  // CUDA_ERROR_NO_DEVICE
    return "no GPU is visible" + visible_note;
  else if (status != 0)
    return "the NVIDIA driver failed to start (cuInit error " + std::to_string(status) + ")";
  if (cu_count(&count) != 0 || count == 0) return "no GPU is visible" + visible_note;
  return "";
}

// The driver's answer, asked once a process: auto asks for a device and then for the reason it
// took the CPU.
const std::string& driver_problem() {
  static const std::string problem = ask_driver();
  return problem;
}

// The first of: no CUDA in this build, no driver, the CUDA module missing, a driver that fails,
// no GPU visible.
std::string why_no_cuda() {
  if (std::string why; !cuda_module(&why)) return why;
  if (!driver_problem().empty()) return driver_problem();
  return "torch sees no CUDA device although the driver reports one";
}

struct CudaModule {
  void* handle = nullptr;
  std::string why;  // why there is none
};

// Loads the module where CUDA can run at all: a CUDA build on a machine with the NVIDIA driver.
CudaModule load_cuda_module() {
  if (!BUILT_WITH_CUDA) return {nullptr, NO_CUDA_BUILD};
  if (!nvidia_driver()) return {nullptr, NO_DRIVER};
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path = (exe.parent_path() / CUDA_MODULE_FILE).string();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* error = dlerror();
    return {nullptr, "CUDA's part of legalnet cannot be loaded (" + std::string(error ? error : path) + ")"};
  }
  // torch's CUDA registry answers what it answered first: a question asked before the load
  // (torch::manual_seed asks) left it without CUDA for the process. A fault of legalnet's order
  // of calls, said as such rather than as a missing GPU.
  if (!at::detail::getCUDAHooks().isBuilt())
    throw Error("internal error: torch was asked about CUDA before legalnet loaded " + path);
  return {handle, ""};
}

bool cuda_usable() { return cuda_module() && driver_problem().empty() && torch::cuda::is_available(); }

}  // namespace

void* cuda_module(std::string* why) {
  static const CudaModule module = load_cuda_module();
  if (why) *why = module.why;
  return module.handle;
}

std::string cpu_fallback_reason() { return cuda_usable() ? std::string() : why_no_cuda(); }

torch::Device pick_device(const std::string& spec) {
  if (spec == "auto") return cuda_usable() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (spec == "cpu") return torch::Device(torch::kCPU);
  if (spec.rfind("cuda", 0) == 0) {
    int index = 0;
    if (spec.size() > 5 && spec[4] == ':') {
      try {
        size_t used = 0;
        index = std::stoi(spec.substr(5), &used);
        if (used != spec.size() - 5) throw std::invalid_argument(spec);
      } catch (const std::exception&) {
        throw Error("--device " + spec + ": bad device number");
      }
    } else if (spec != "cuda") {
      throw Error("--device " + spec + ": expected auto, cpu, cuda or cuda:N");
    }
    if (!cuda_usable()) throw Error("--device " + spec + ": " + why_no_cuda());
    if (index < 0 || index >= int(torch::cuda::device_count()))
      throw Error("--device " + spec + ": there are " + std::to_string(torch::cuda::device_count()) + " CUDA devices");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw Error("--device " + spec + ": expected auto, cpu, cuda or cuda:N");
}

void configure_threads(int threads) { torch::set_num_threads(worker_threads(threads)); }

void keep_freed_memory() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

void configure_for_speed(const torch::Device& device, Precision precision) {
  if (!device.is_cuda()) return;
  at::globalContext().setBenchmarkCuDNN(true);
  // fp32 means IEEE fp32; tf32 lets cuBLAS and cuDNN use TensorFloat-32 for fp32 tensors, and so
  // does bf16 for what autocast leaves in fp32.
  const auto fp32 = precision == Precision::FP32 ? at::Float32Precision::IEEE : at::Float32Precision::TF32;
  for (const auto op : {at::Float32Op::MATMUL, at::Float32Op::CONV})
    at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, op, fp32);
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace legalnet::nn
