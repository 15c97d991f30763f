// The option rows train and evaluate share for where and how the net runs: --device,
// --precision and --threads (threads_option's row, as every tool's), for any options struct with
// the fields `device` (a string), `compute_precision` (nn::Precision) and `threads` (int);
// --kernels for one with `kernels` (nn::Kernels). Not recorded under a key: what a run records is
// the device, precision and kernels it resolved them to (its facts).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "compute/choices.h"
#include "run/threads_option.h"
#include "util/option_cli.h"

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
      R::value(&Options::device, "--device", "", "auto | cpu | cuda | cuda:N")
          .validator(device_choice())
          .show_default(),
      R::choice(&Options::compute_precision, "--precision", "", nn::PRECISIONS,
                "Forward pass arithmetic; auto: tf32 on CUDA, bf16 on CPUs with AVX-512 BF16 or AMX, else fp32, "
                "and fp32 for a resnet on the board kernels unless AMX (weights, optimizer and loss stay "
                "fp32); tf32: fp32 tensors, TensorFloat-32 matmuls (CUDA only); "
                "fp32 on CUDA is strict IEEE"),
      threads_option(&Options::threads, "CPU threads"),
  };
}

template <class Options>
options::Row<Options> kernels_row() {
  return options::Rows<Options>::choice(
      &Options::kernels, "--kernels", "", nn::KERNELS,
      "resnet's 3x3 convolutions on a CPU: torch's, or board (our own, same weights: in fp32 Winograd F(4x4,3x3) "
      "on the 8x8 board; in bf16 train's weight gradient, on AVX512-BF16); auto: board on a CPU with AVX2 in fp32 "
      "or with AVX512-BF16 and no AMX in bf16, else torch; CUDA always runs torch's");
}

}  // namespace legalnet::run
