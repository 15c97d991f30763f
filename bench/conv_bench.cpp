// One 3x3 convolution on 8x8 boards, torch's against the board kernels (kernels/kernels.h),
// forward alone and forward + backward (input and weight gradients), in turns over several
// rounds; the median of each, its effective rate (the direct convolution's FLOPs per second)
// and the ratio (issue 32). The instruction set of the board kernels is printed; with
// ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 both imitate an AVX2-only CPU. On a CPU
// with AVX512-BF16, also the bf16 convolution forward + backward, torch's against the board
// kernels' (torch's forward and input gradient, our weight gradient: board_conv3x3_bf16). Then
// the batch norm + residual + ReLU after such a convolution in training, forward + backward:
// torch's BatchNorm2d, add and relu against the board kernels' one node (kernels/kernels.h), and
// the same in evaluation mode without gradients (inference). Last the ray scan layer of
// --mixing rays (nn::RayScan on the output's channels, its two linear maps included) forward +
// backward: torch's doubling gathers against the board kernel's walk.
// Usage: legalnet_conv_bench [BATCH=train's] [CHANNELS_IN=32] [CHANNELS_OUT=32] [THREADS=0] [ROUNDS=5] [TILE=4]
#include <fmt/core.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "compute/device.h"
#include "kernels/kernels.h"
#include "kernels/tile_gemm.h"
#include "nn/models.h"
#include "run/train/options.h"

using namespace legalnet;
using namespace legalnet::nn;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call of f, over enough calls to take ~0.2 s.
template <typename F>
double time_of(F f) {
  f();  // warm-up: allocations, first-touch
  int calls = 0;
  const auto t0 = Clock::now();
  double s = 0;
  while (s < 0.2) {
    f();
    ++calls;
    s = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return s / calls;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : run::TrainOptions{}.batch_size;
  const int64_t c = argc > 2 ? std::atoll(argv[2]) : 32, k = argc > 3 ? std::atoll(argv[3]) : 32;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 0;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 5;
  const auto tile = argc > 6 && std::atoi(argv[6]) == 2 ? WinogradTile::F2 : WinogradTile::F4;
  if (threads > 0) at::set_num_threads(threads);
  torch::manual_seed(1);
  const auto cl = torch::MemoryFormat::ChannelsLast;
  const auto x = torch::randn({batch, c, 8, 8}).contiguous(cl).requires_grad_(true);
  const auto w = (torch::randn({k, c, 3, 3}) / 17.0).contiguous(cl).requires_grad_(true);
  const auto gy = torch::randn({batch, k, 8, 8}).contiguous(cl);
  auto torch_conv = [&] { return torch::conv2d(x, w, {}, 1, 1); };
  auto board_conv = [&] { return board_conv3x3(x, w, tile); };
  const auto xb = x.detach().to(torch::kBFloat16).contiguous(cl).requires_grad_(true);
  const auto gyb = gy.to(torch::kBFloat16);
  const bool bf16 = board_conv_bf16_applies(xb, w);
  std::vector<double> t[6];
  for (int r = 0; r < rounds; ++r) {
    if (bf16) {
      t[4].push_back(
          time_of([&] { torch::autograd::backward({torch::conv2d(xb, w.to(torch::kBFloat16), {}, 1, 1)}, {gyb}); }));
      t[5].push_back(time_of([&] { torch::autograd::backward({board_conv3x3_bf16(xb, w)}, {gyb}); }));
    }
    {
      torch::NoGradGuard no_grad;
      t[0].push_back(time_of(torch_conv));
      t[1].push_back(time_of(board_conv));
    }
    t[2].push_back(time_of([&] { torch::autograd::backward({torch_conv()}, {gy}); }));
    t[3].push_back(time_of([&] { torch::autograd::backward({board_conv()}, {gy}); }));
  }
  // The norm + residual + ReLU on the convolution's output, forward + backward.
  torch::nn::BatchNorm2d norm(k);
  const auto conv_out = torch::randn({batch, k, 8, 8}).contiguous(cl).requires_grad_(true);
  const auto residual = torch::randn({batch, k, 8, 8}).contiguous(cl).requires_grad_(true);
  std::vector<double> norms[4];
  for (int r = 0; r < rounds; ++r) {
    norms[0].push_back(time_of([&] { torch::autograd::backward({torch::relu(norm(conv_out) + residual)}, {gy}); }));
    norms[1].push_back(time_of([&] { torch::autograd::backward({board_norm_relu(conv_out, *norm, residual)}, {gy}); }));
  }
  // The same in evaluation mode, as inference runs it (evaluate, train's validation).
  norm->eval();
  for (int r = 0; r < rounds; ++r) {
    torch::NoGradGuard no_grad;
    norms[2].push_back(time_of([&] { return torch::relu(norm(conv_out) + residual); }));
    norms[3].push_back(time_of([&] { return board_norm_relu(conv_out, *norm, residual); }));
  }
  // The ray scan layer, forward + backward, on either scan.
  RayScan rays(static_cast<int>(k));
  std::vector<double> scans[2];
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < 2; ++i)
      scans[i].push_back(time_of([&] {
        torch::autograd::backward({rays->forward(conv_out, i == 0 ? Kernels::TORCH : Kernels::BOARD)}, {gy});
      }));
  const double flop = 2.0 * double(batch) * 64 * double(c * k) * 9;
  const std::string cpu = cpu_model_name();
  const char* onednn = std::getenv("ONEDNN_MAX_CPU_ISA");
  fmt::print("{}, {} threads{}; board kernels {}, F({}x{}); [{},{},8,8] -> {} channels, median of {} rounds\n",
             cpu.empty() ? "unknown CPU" : cpu, at::get_num_threads(),
             onednn ? fmt::format(", ONEDNN_MAX_CPU_ISA={}", onednn) : "", board_isa_name(board_isa()), int(tile),
             int(tile), batch, c, k, rounds);
  const char* what[3] = {"forward", "forward + backward", "bf16 fwd + backward"};
  for (int i = 0; i < (bf16 ? 3 : 2); ++i) {
    const double a = median(t[2 * i]), b = median(t[2 * i + 1]), f = flop * (i == 0 ? 1 : 3);
    fmt::print("  {:<20} torch {:8.3f} ms ({:6.1f} GFLOP/s)   board {:8.3f} ms ({:6.1f} GFLOP/s)   {:.2f}x\n", what[i],
               a * 1e3, f / a / 1e9, b * 1e3, f / b / 1e9, a / b);
  }
  const char* norm_what[2] = {"norm+res+relu f+b", "norm+res+relu eval"};
  for (int i = 0; i < 2; ++i) {
    const double a = median(norms[2 * i]), b = median(norms[2 * i + 1]);
    fmt::print("  {:<20} torch {:8.3f} ms                    board {:8.3f} ms                    {:.2f}x\n",
               norm_what[i], a * 1e3, b * 1e3, a / b);
  }
  const double a = median(scans[0]), b = median(scans[1]);
  fmt::print("  {:<20} torch {:8.3f} ms                    board {:8.3f} ms                    {:.2f}x\n",
             "ray scan layer f+b", a * 1e3, b * 1e3, a / b);
}
