#include "nn/device.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "util/error.h"

namespace legalnet::nn {

torch::Device pick_device(const std::string& spec) {
  if (spec == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (spec == "cpu") return torch::Device(torch::kCPU);
  if (spec.rfind("cuda", 0) == 0) {
    if (!torch::cuda::is_available())
      throw Error("--device " + spec + ": CUDA is not available (this libtorch or machine has no GPU)");
    int index = 0;
    if (spec.size() > 5 && spec[4] == ':') {
      try {
        index = std::stoi(spec.substr(5));
      } catch (const std::exception&) {
        throw Error("--device " + spec + ": bad device number");
      }
    } else if (spec != "cuda") {
      throw Error("--device " + spec + ": expected auto, cpu, cuda or cuda:N");
    }
    if (index < 0 || index >= int(torch::cuda::device_count()))
      throw Error("--device " + spec + ": there are " + std::to_string(torch::cuda::device_count()) + " CUDA devices");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw Error("--device " + spec + ": expected auto, cpu, cuda or cuda:N");
}

void ensure_passive_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  setenv("GOMP_SPINCOUNT", "10000", /*overwrite=*/0);
  execv("/proc/self/exe", argv);  // returns only on failure: then go on with the default policy
}

void configure_threads(int threads) {
  const int n = threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(n);
}

void keep_freed_memory() {
#ifdef M_MMAP_THRESHOLD
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

void configure_for_speed(const torch::Device& device) {
  if (!device.is_cuda()) return;
  at::globalContext().setBenchmarkCuDNN(true);
  at::globalContext().setAllowTF32CuBLAS(true);
  at::globalContext().setAllowTF32CuDNN(true);
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace legalnet::nn
