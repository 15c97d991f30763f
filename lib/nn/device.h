// Where and how torch runs: the device chosen once by a tool, threads, and speed settings.
#pragma once

#include <torch/torch.h>

#include <string>

namespace legalnet::nn {

// "auto" (CUDA when available, else CPU), "cpu", "cuda" or "cuda:N"; throws legalnet::Error
// when CUDA is asked for and missing.
torch::Device pick_device(const std::string& spec);

// Sets torch's intra-op threads (0: all cores) and one inter-op thread.
void configure_threads(int threads);

// On CUDA: cuDNN benchmark mode and TF32 matmuls/convolutions, which make small nets fast.
void configure_for_speed(const torch::Device& device);

int64_t count_parameters(const torch::nn::Module& module);

}  // namespace legalnet::nn
