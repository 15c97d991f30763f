// Where and how torch runs: the device chosen once by a tool, threads, and speed settings.
#pragma once

#include <torch/torch.h>

#include <string>

#include "compute/arithmetic.h"
#include "util/machine.h"

namespace legalnet::nn {

// "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N"; throws legalnet::Error
// naming the reason (no CUDA in this build, no driver, no GPU visible) when CUDA is asked for
// and missing. Call it before any work: it is the check of --device. auto and cuda load CUDA's part
// of legalnet (compute/cuda_module.h) here, so nothing may ask torch about CUDA before.
torch::Device pick_device(const std::string& spec);

// Why "auto" would pick the CPU (empty when a GPU is usable), for the tools' verbose output.
std::string cpu_fallback_reason();

// The CPU's model name, beside every speed figure a tool or bench says (util/machine.h).
using legalnet::cpu_model_name;

// Sets torch's intra-op threads (0: all cores); the inter-op threads keep torch's default.
void configure_threads(int threads);

// glibc gives large freed blocks (activations, gradients, HDF5 chunk buffers) back to the
// system and page-faults them in again on the next step; a profile of train on this project's
// VM put a quarter of the time in those faults. Keeps them in the heap (fixed mmap threshold at
// glibc's 32 MiB maximum, trimming only above 1 GiB): fp32 steps +18%, streaming +14%.
void keep_freed_memory();

// On CUDA: cuDNN benchmark mode, and TF32 matmuls/convolutions unless `precision` is fp32.
void configure_for_speed(const torch::Device& device, Precision precision);

int64_t count_parameters(const torch::nn::Module& module);

}  // namespace legalnet::nn
