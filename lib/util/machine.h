// What machine a figure was measured on, as every figure's label names it: the CPU's model, the
// vector instruction sets that decide the arithmetic's speed, and the cores.
#pragma once

#include <string>

namespace legalnet {

// /proc/cpuinfo's "model name" ("AMD EPYC 9R14 96-Core Processor"), or "" where it has none.
std::string cpu_model_name();

// "AMD EPYC 9R14 96-Core Processor (avx2 fma avx512f avx512_bf16 avx512_vnni), 2 cores": the model,
// those of its flags the kernels choose by (avx2, fma, avx512f, avx512_bf16, avx512_vnni,
// amx_bf16) and the cores this process may run on.
std::string cpu_description();

}  // namespace legalnet
