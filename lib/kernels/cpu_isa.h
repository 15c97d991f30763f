// The instruction sets the board kernels have code for and the CPU's bf16 units: what
// kernels.h's kernels and compute/arithmetic.h's policy ask of the CPU. No torch.
#pragma once

namespace legalnet::nn {

// The instruction sets the board kernels have code for, in increasing order.
enum class BoardIsa { BASELINE, AVX2, AVX512 };
const char* board_isa_name(BoardIsa isa);

// The best the CPU has, lowered to AVX2 when ONEDNN_MAX_CPU_ISA asks oneDNN for AVX2 or less
// (the way this project imitates an AVX2-only CPU: our kernels follow torch's), and to the cap
// set below.
BoardIsa board_isa();
// Tests run every lower instruction set on a CPU that has more.
void board_isa_cap(BoardIsa cap);

// The bf16 units a CPU may have.
enum class CpuFeature { AVX512_BF16, AMX_BF16 };
// Whether ONEDNN_MAX_CPU_ISA leaves oneDNN that unit (unset or ALL: every one): an imitated
// AVX2-only CPU has neither, so nothing here picks bf16 for it.
bool onednn_allows(CpuFeature feature);

// Whether this CPU has AVX512-BF16 (vdpbf16ps), and whether it has AMX-BF16 (cpuid), each as
// ONEDNN_MAX_CPU_ISA allows (onednn_allows).
bool cpu_has_avx512_bf16();
bool cpu_has_amx_bf16();
// Whether the bf16 weight gradient runs here: AVX512-BF16, not capped below AVX-512.
bool has_bf16_weight_gradient();

}  // namespace legalnet::nn
