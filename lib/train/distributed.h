// Data-parallel training across processes with torch's c10d process groups: Gloo on CPU,
// NCCL on CUDA where this libtorch has it (else Gloo, which also moves CUDA tensors).
// Every rank runs the same loop on its own slice of each global batch; gradients are averaged
// with one all-reduce per step, so N ranks with batch B take the steps one process takes with
// batch N x B. The c10d headers stay inside distributed.cpp.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "train/process_group_spec.h"

namespace legalnet::train {

// The collectives of one run. With world_size 1 nothing is opened and every call is a no-op.
class Collectives {
 public:
  // Rendezvous at master_addr:master_port (rank 0 serves it), then a Gloo or NCCL group.
  Collectives(const ProcessGroupSpec& spec, const torch::Device& device);
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return spec_.rank; }
  int world_size() const { return spec_.world_size; }
  bool is_main() const { return spec_.is_main(); }
  const char* backend() const;  // "none", "gloo" or "nccl"

  void all_reduce_sum(torch::Tensor& tensor);  // in place, on every rank
  void broadcast_from_main(torch::Tensor& tensor);
  // Every rank's value, in rank order.
  std::vector<int64_t> all_gather(int64_t value);
  // The smallest of the ranks' values: what every rank can keep up with (the slowest rank's steps).
  int64_t fewest(int64_t value);
  // Whether `flag` is true on any rank (the ranks must agree on when to stop).
  bool any(bool flag);
  // Returns when every rank has called it; the ranks call it before they leave, because a
  // group whose peer closed its connections mid-operation aborts the process.
  void barrier() { any(false); }

 private:
  struct Group;
  ProcessGroupSpec spec_;
  std::unique_ptr<Group> group_;
};

// Averages the gradients of `module` over the ranks in one all-reduce that also carries the
// step's loss; returns the loss averaged over the ranks (the global batch's loss).
double average_gradients(Collectives& collectives, torch::nn::Module& module, const torch::Tensor& loss);
// Copies rank 0's parameters and buffers to every rank.
void broadcast_state(Collectives& collectives, torch::nn::Module& module);
// Averages floating-point buffers (batch-norm running statistics) over the ranks, so that
// every rank validates and checkpoints the same model.
void average_buffers(Collectives& collectives, torch::nn::Module& module);

}  // namespace legalnet::train
