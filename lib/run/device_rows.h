// The option rows train and evaluate share for where and how the net runs: --device,
// --precision and --threads, for any options struct with the fields `device` (a string),
// `compute_precision` (nn::Precision) and `threads` (int). Not recorded under a key: what a run
// records is the device and precision it resolved them to (its facts).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "nn/precision_choice.h"
#include "util/option_table.h"

namespace legalnet::run {

// auto | cpu | cuda | cuda:N, checked by the parser before any data loads.
inline CLI::Validator device_choice() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text == "auto" || text == "cpu" || text == "cuda") return {};
        if (text.rfind("cuda:", 0) == 0 && text.size() > 5 && text.size() < 9 &&
            text.find_first_not_of("0123456789", 5) == std::string::npos)
          return {};
        return "device '" + text + "': expected auto, cpu, cuda or cuda:N";
      },
      "auto|cpu|cuda|cuda:N");
}

template <class Options>
std::vector<options::Row<Options>> device_rows() {
  using R = options::Rows<Options>;
  return {
      R::value(&Options::device, "--device", "", "auto | cpu | cuda | cuda:N").validator(device_choice()).show_default(),
      R::choice(&Options::compute_precision, "--precision", "", nn::PRECISIONS,
                "Forward pass arithmetic; auto: tf32 on CUDA, bf16 on CPUs with AVX-512 BF16 or AMX, else fp32, "
                "and fp32 for train's resnet on the board kernels unless AMX (weights, optimizer and loss stay "
                "fp32); tf32: fp32 tensors, TensorFloat-32 matmuls (CUDA only); "
                "fp32 on CUDA is strict IEEE"),
      R::value(&Options::threads, "--threads,-t", "", "CPU threads (0: all cores)").int_range(0, 1024).show_default(),
  };
}

}  // namespace legalnet::run
