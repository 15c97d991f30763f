#include "train/distributed.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "util/error.h"

// CMake defines LEGALNET_GLOO / LEGALNET_NCCL when this libtorch ships the c10d headers and
// the libraries they need (Debian: libgloo-dev; NCCL: a CUDA libtorch with nccl.h).
#if defined(LEGALNET_GLOO)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#if defined(LEGALNET_NCCL)
#include <dlfcn.h>

#include "compute/cuda_module.h"
#endif

namespace legalnet::train {
namespace {

// An optional integer variable; `fallback` when unset.
int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (!value || !*value) return fallback;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (*end || n < 0 || n > 1 << 30)
    throw Error(fmt::format("environment variable {}='{}' is not a count", name, value));
  return int(n);
}

bool env_set(const char* name) { return std::getenv(name) && *std::getenv(name); }

// Slurm writes some counts per node as "2(x3)": the leading number is this node's.
int env_leading_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value >= '1' && *value <= '9' ? std::atoi(value) : fallback;
}

}  // namespace

ProcessGroupSpec process_group_from_environment() {
  ProcessGroupSpec spec;
  if (env_set("WORLD_SIZE")) {
    spec.world_size = env_int("WORLD_SIZE", 1);
    spec.rank = env_int("RANK", 0);
    spec.local_rank = env_int("LOCAL_RANK", spec.rank);
    spec.local_world_size = env_int("LOCAL_WORLD_SIZE", spec.world_size);
  } else if (env_set("SLURM_NTASKS") && env_set("SLURM_PROCID")) {
    spec.world_size = env_int("SLURM_NTASKS", 1);
    spec.rank = env_int("SLURM_PROCID", 0);
    spec.local_rank = env_int("SLURM_LOCALID", 0);
    spec.local_world_size = env_leading_int("SLURM_NTASKS_PER_NODE", env_leading_int("SLURM_TASKS_PER_NODE", 1));
  }
  if (spec.world_size < 1) throw Error("environment: the world size must be at least 1");
  if (spec.rank >= spec.world_size)
    throw Error(fmt::format("environment: rank {} is not below the world size {}", spec.rank, spec.world_size));
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr) spec.master_addr = addr;
  spec.master_port = env_int("MASTER_PORT", spec.master_port);
  if (spec.master_port < 1 || spec.master_port > 65535)
    throw Error(fmt::format("environment variable MASTER_PORT={} is not a port", spec.master_port));
  spec.timeout_seconds = env_int("LEGALNET_RANK_TIMEOUT", spec.timeout_seconds);
  if (spec.timeout_seconds < 1)
    throw Error(
        "environment variable LEGALNET_RANK_TIMEOUT=0: the seconds a rank waits for the others must be at least 1");
  return spec;
}

#if defined(LEGALNET_GLOO)
namespace {

// A collective that failed, as one line that says which rank stopped and why: gloo's own
// message (a file and line, or a stack) is reduced to its reason.
Error lost_peer(const ProcessGroupSpec& spec, const std::exception& e) {
  std::string what = e.what();
  what = what.substr(0, what.find('\n'));
  if (what.size() > 1 && what[0] == '[' && what.find("] ") != std::string::npos)
    what = what.substr(what.find("] ") + 2);
  const std::string me = fmt::format("rank {} of {}", spec.rank, spec.world_size);
  const std::string peer = spec.world_size == 2 ? fmt::format("rank {}", 1 - spec.rank) : "another rank";
  auto has = [&](const char* text) { return what.find(text) != std::string::npos; };
  if (has("Timed out") || has("timed out") || has("Timeout") || has("timeout"))
    return Error(
        fmt::format("{}: {} did not answer for {} s (stopped, hung or far behind; LEGALNET_RANK_TIMEOUT sets "
                    "the wait); this rank stops ({})",
                    me, peer, spec.timeout_seconds, what));
  if (has("reset by peer") || has("closed by peer") || has("Connection closed") || has("Broken pipe") || has("EOF") ||
      has("Connection refused"))
    return Error(fmt::format("{}: {} ended (its connections closed); this rank stops too ({})", me, peer, what));
  return Error(fmt::format("{}: a collective with the other ranks failed: {}", me, what));
}

}  // namespace

struct Collectives::Group {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#if defined(LEGALNET_NCCL)
  c10::intrusive_ptr<c10d::Backend> nccl;  // made by compute/cuda_module.h's module: its class is libtorch_cuda's
  torch::Device device = torch::kCPU;
#endif
  // Runs call(group, tensors) on the group in use and waits for it.
  template <typename Call>
  void run(torch::Tensor& tensor, Call&& call) {
#if defined(LEGALNET_NCCL)
    if (nccl) {
      // NCCL moves only CUDA tensors: CPU ones (metrics, flags) make a round trip.
      std::vector<torch::Tensor> tensors{tensor.is_cuda() ? tensor : tensor.to(device)};
      call(*nccl, tensors)->wait();
      if (!tensor.is_cuda()) tensor.copy_(tensors[0]);
      return;
    }
#endif
    std::vector<torch::Tensor> tensors{tensor};
    call(*gloo, tensors)->wait();
  }
};
#else
struct Collectives::Group {};
#endif

Collectives::Collectives(const ProcessGroupSpec& spec, const torch::Device& device) : spec_(spec) {
  if (spec.world_size == 1) return;
#if defined(LEGALNET_GLOO)
  group_ = std::make_unique<Group>();
  // c10d logs its retries and failures on stderr with a stack each (a C++ program never reads
  // TORCH_CPP_LOG_LEVEL unless asked): a failure here is one line of ours instead, unless the
  // variable asks for c10's log.
  if (env_set("TORCH_CPP_LOG_LEVEL"))
    c10::initLogging();
  else
    FLAGS_caffe2_log_level = c10::GLOG_FATAL;
  const std::string where = fmt::format("{}:{}", spec.master_addr, spec.master_port);
  try {
    c10d::TCPStoreOptions options;
    options.port = uint16_t(spec.master_port);
    options.isServer = spec.is_main();
    options.numWorkers = size_t(spec.world_size);
    options.waitWorkers = true;
    options.timeout = std::chrono::seconds(spec.timeout_seconds);
    group_->store = c10::make_intrusive<c10d::TCPStore>(spec.master_addr, options);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw Error(fmt::format("rank {} of {}: the rendezvous at {} (MASTER_ADDR:MASTER_PORT) failed: {}", spec.rank,
                            spec.world_size, where, what.substr(0, what.find('\n'))));
  }
  try {
#if defined(LEGALNET_NCCL)
    if (device.is_cuda()) {
      // The device is CUDA, so nn::pick_device loaded the module.
      const auto make = reinterpret_cast<nn::NcclGroupFunction>(dlsym(nn::cuda_module(), nn::NCCL_GROUP_FUNCTION));
      if (make) group_->nccl = make(group_->store, spec.rank, spec.world_size);
      if (!group_->nccl) throw Error("this build's CUDA module has no NCCL");
      group_->device = device;
      return;
    }
#endif
    // Every collective waits at most the timeout for its peers (gloo's own default: 30 minutes).
    auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(spec.timeout_seconds));
    // Ranks on one node talk over loopback; across nodes Gloo picks the interface of this
    // host's name, or the one named by GLOO_SOCKET_IFNAME (as in PyTorch).
    if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface)
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
    else if (spec.master_addr == "127.0.0.1" || spec.master_addr == "localhost")
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    group_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(group_->store, spec.rank, spec.world_size, options);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw Error(fmt::format("rank {} of {}: cannot form the process group: {}", spec.rank, spec.world_size,
                            what.substr(0, what.find('\n'))));
  }
  (void)device;
#else
  (void)device;
  throw Error(fmt::format(
      "WORLD_SIZE/SLURM_NTASKS is {}, but this build has no c10d process groups (configure with libgloo-dev "
      "installed); run one process per job",
      spec.world_size));
#endif
}

Collectives::~Collectives() = default;

const char* Collectives::backend() const {
  if (!group_) return "none";
#if defined(LEGALNET_NCCL)
  if (group_->nccl) return "nccl";
#endif
  return "gloo";
}

void Collectives::all_reduce_sum(torch::Tensor& tensor) {
  if (!group_) return;
#if defined(LEGALNET_GLOO)
  try {
    group_->run(tensor, [](auto& group, std::vector<torch::Tensor>& tensors) { return group.allreduce(tensors); });
  } catch (const std::exception& e) {
    throw lost_peer(spec_, e);
  }
#endif
}

void Collectives::broadcast_from_main(torch::Tensor& tensor) {
  if (!group_) return;
#if defined(LEGALNET_GLOO)
  try {
    group_->run(tensor, [](auto& group, std::vector<torch::Tensor>& tensors) { return group.broadcast(tensors); });
  } catch (const std::exception& e) {
    throw lost_peer(spec_, e);
  }
#endif
}

std::vector<int64_t> Collectives::all_gather(int64_t value) {
  // One all-reduce of a vector with this rank's value in its own slot (exact up to 2^53).
  auto slots = torch::zeros({world_size()}, torch::kFloat64);
  slots[rank()] = double(value);
  all_reduce_sum(slots);
  std::vector<int64_t> values;
  for (int r = 0; r < world_size(); ++r) values.push_back(int64_t(slots[r].item<double>()));
  return values;
}

int64_t Collectives::fewest(int64_t value) {
  const std::vector<int64_t> values = all_gather(value);
  return *std::min_element(values.begin(), values.end());
}

bool Collectives::any(bool flag) {
  if (!group_) return flag;
  auto t = torch::full({1}, flag ? 1.0f : 0.0f);
  all_reduce_sum(t);
  return t.item<float>() > 0;
}

double average_gradients(Collectives& collectives, torch::nn::Module& module, const torch::Tensor& loss) {
  if (collectives.world_size() == 1) return loss.item<double>();
  // One flat buffer: a single all-reduce per step instead of one per tensor.
  std::vector<torch::Tensor> grads, pieces;
  for (const auto& p : module.parameters())
    if (p.grad().defined()) {
      grads.push_back(p.grad());
      pieces.push_back(p.grad().reshape(-1));
    }
  pieces.push_back(loss.detach().reshape(1).to(torch::kFloat32));
  auto flat = torch::cat(pieces);
  collectives.all_reduce_sum(flat);
  flat.div_(double(collectives.world_size()));
  int64_t offset = 0;
  for (auto& g : grads) {
    g.copy_(flat.narrow(0, offset, g.numel()).view_as(g));
    offset += g.numel();
  }
  return flat[offset].item<double>();
}

void broadcast_state(Collectives& collectives, torch::nn::Module& module) {
  if (collectives.world_size() == 1) return;
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    auto data = p.detach();
    collectives.broadcast_from_main(data);
  }
  for (auto& b : module.buffers()) collectives.broadcast_from_main(b);
}

void average_buffers(Collectives& collectives, torch::nn::Module& module) {
  if (collectives.world_size() == 1) return;
  torch::NoGradGuard no_grad;
  for (auto& b : module.buffers())
    if (b.is_floating_point()) {
      collectives.all_reduce_sum(b);
      b.div_(double(collectives.world_size()));
    }
}

}  // namespace legalnet::train
