// Where one CPU training step of the default net (resnet 6x32) goes, and how fast it could go,
// in one run (issue 32):
//   - the machine's fp32 FMA limit, measured: AVX2 FMAs on 12 independent accumulators on
//     every thread at once (compiled for AVX2+FMA with a target attribute, so the build works
//     on any x86-64; a CPU without them prints 0);
//   - torch's fp32 matmul rate: a 1024^3 matmul and the batched matmul of the board kernels'
//     shape (36 x [4 tiles * batch, 32] x [32, 32]);
//   - the step in parts, for each --kernels (torch, board): data (make_batch: train's loader
//     does it on a background thread, overlapped with the step), forward of the stem and the
//     tower, forward of the policy head, the loss, backward of loss and head, backward of the
//     tower, the optimizer (Adam); the step's samples/s and its effective throughput (the
//     direct convolution's FLOPs, 3 forward passes a step, per second) against the FMA limit;
//   - the 13 convolutions alone (stem and the tower's 12), forward and backward (input and
//     weight gradients), with each kernels.
// Each measurement runs ROUNDS times in turn with the others, and the median is reported, so
// that a slow spell of a shared machine does not land on one of them.
// ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 with precision fp32 imitates an
// AVX2-only CPU (the header line says so).
// HEAD is the resnet's policy head (train --policy-head): auto, the default, is what train builds.
// Usage: legalnet_step_profile DATASET.h5 [PRECISION=fp32] [BATCH=train's] [STEPS=20] [ROUNDS=3] [THREADS=0]
// [HEAD=auto]
#include <fmt/core.h>
#include <immintrin.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

#include "compute/device.h"
#include "kernels/kernels.h"
#include "kernels/tile_gemm.h"
#include "nn/forward.h"
#include "nn/loss.h"
#include "nn/models.h"
#include "run/train/optimizer.h"
#include "run/train/options.h"
#include "train/batches.h"
#include "train/training_data.h"

using namespace legalnet;
using namespace legalnet::nn;
using namespace legalnet::train;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// FLOPs done by `iterations` rounds of 12 independent 8-wide FMAs: 12 accumulators cover the
// FMA units' latency (2 units x 4 cycles on Zen and Intel cores since Haswell).
__attribute__((target("avx2,fma"))) double fma_loop(int64_t iterations) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t n = 0; n < iterations; ++n)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 sum = acc[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  // Used, so that the loop is not optimised away.
  if (out[0] == 12345.0f) fmt::print(" ");
  return double(iterations) * 12 * 8 * 2;
}

// The fp32 FMA limit of all torch's threads together, in GFLOP/s: the best of a few rounds of
// the loop run on every thread at once.
double fma_limit() {
  if (board_isa() < BoardIsa::AVX2) return 0;
  const int threads = at::get_num_threads();
  const int64_t iterations = 20'000'000;
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    std::vector<double> flops(size_t(threads), 0.0);
    const auto t0 = Clock::now();
    at::parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) flops[size_t(i)] = fma_loop(iterations);
    });
    double total = 0;
    for (double f : flops) total += f;
    best = std::max(best, total / seconds_since(t0) / 1e9);
  }
  return best;
}

// torch's fp32 rate on a square matmul and on the board kernels' batched matmul, GFLOP/s.
std::pair<double, double> matmul_rates(int64_t batch) {
  torch::NoGradGuard no_grad;
  const int64_t n = 1024;
  const auto a = torch::randn({n, n}), b = torch::randn({n, n});
  const auto v = torch::randn({36, 4 * batch, 32}), u = torch::randn({36, 32, 32});
  double square = 0, batched = 0;
  for (int i = 0; i < 10; ++i) {
    auto t0 = Clock::now();
    const auto c = torch::mm(a, b);
    square = std::max(square, 2.0 * n * n * n / seconds_since(t0) / 1e9);
    t0 = Clock::now();
    const auto m = at::bmm(v, u);
    batched = std::max(batched, 2.0 * 36 * 4 * batch * 32 * 32 / seconds_since(t0) / 1e9);
  }
  return {square, batched};
}

std::string cpu_model() {
  const std::string name = nn::cpu_model_name();
  return name.empty() ? "unknown CPU" : name;
}

const char* PARTS[] = {"data (loader thread)", "forward stem+tower", "forward head", "loss",
                       "backward loss+head",   "backward tower",     "optimizer"};
constexpr int N_PARTS = 7;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: {} DATASET.h5 [PRECISION=fp32] [BATCH=train's] [STEPS=20] [ROUNDS=3] [THREADS=0] [HEAD=auto]\n",
               argv[0]);
    return 2;
  }
  const Precision precision = resolve_precision(argc > 2 ? argv[2] : "fp32", torch::kCPU);
  const int batch = argc > 3 ? std::atoi(argv[3]) : run::TrainOptions{}.batch_size;
  const int steps = argc > 4 ? std::atoi(argv[4]) : 20;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 3;
  keep_freed_memory();
  configure_threads(argc > 6 ? std::atoi(argv[6]) : 0);
  ModelConfig wanted;  // the default resnet, with the head train gives it
  wanted.policy_head = find_choice(nn::POLICY_HEADS, argc > 7 ? argv[7] : "auto", "policy head").value;
  const ModelConfig c = run::trained_model(wanted);
  LoadOptions load;
  load.quiet = true;
  load.max_rows = uint64_t(batch) * 16;
  const CompactPositions data = load_positions({argv[1]}, load);
  const std::vector<uint32_t> order = epoch_order(data, 0, 0);

  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  const char* mkl = std::getenv("MKL_ENABLE_INSTRUCTIONS");
  const bool imitated = (isa && *isa) || (mkl && *mkl);
  const double fma = fma_limit();
  const auto [square, batched] = matmul_rates(batch);
  fmt::print("{} ({} avx512_bf16), {} threads{}; {} {}, batch {}, {:.2f} MFLOP a position forward\n", cpu_model(),
             cpu_has_native_bf16() ? "with" : "no", at::get_num_threads(),
             imitated ? fmt::format(", imitated: ONEDNN_MAX_CPU_ISA={} MKL_ENABLE_INSTRUCTIONS={}", isa ? isa : "",
                                    mkl ? mkl : "")
                      : "",
             c.describe(), precision_name(precision), batch, c.forward_flops() / 1e6);
  fmt::print(
      "  fp32 FMA limit (AVX2, measured) {:.1f} GFLOP/s; torch fp32 matmul 1024^3 {:.1f} GFLOP/s, "
      "batched 36x[{},32]x[32,32] {:.1f} GFLOP/s\n",
      fma, square, 4 * batch, batched);

  // One step in parts. The tower's output is cut from the graph (detached, then given the
  // head's gradient) so that the backward of the head and the tower are timed apart.
  struct Run {
    std::vector<double> parts[N_PARTS];
    std::vector<double> step;
  };
  std::map<Kernels, Run> runs;
  auto profile = [&](Kernels kernels) {
    torch::manual_seed(0);
    auto model = std::make_shared<ResNetImpl>(c);
    choose_memory_format(*model);
    model->use_kernels(kernels);
    run::FusedAdam<torch::optim::Adam> adam(model->parameters(), torch::optim::AdamOptions(1e-3));  // train's
    double t[N_PARTS] = {};
    double whole = 0;
    const auto& moves = model->trained_moves(torch::kCPU);
    for (int i = -3; i < steps; ++i) {  // 3 warm-up steps
      const auto s0 = Clock::now();
      auto t0 = Clock::now();
      const size_t first = size_t((i + 3) % 16) * size_t(batch);
      Batch b = make_batch(data, order.data() + first, size_t(batch), false, c.inputs);
      const double data_s = seconds_since(t0);
      const auto planes = b.planes.contiguous(torch::MemoryFormat::ChannelsLast);
      double p[N_PARTS] = {data_s};
      torch::Tensor tower, cut, loss;
      {
        AutocastScope autocast(precision, torch::kCPU);
        t0 = Clock::now();
        tower = model->tower_forward(planes);
        p[1] = seconds_since(t0);
        t0 = Clock::now();
        cut = tower.detach().requires_grad_(true);
        const PolicyNet::Gathered gathered = model->head_forward(cut);
        p[2] = seconds_since(t0);
        t0 = Clock::now();
        loss = gathered_loss(gathered, b.targets, moves);  // train's loss (nn::training_loss)
        p[3] = seconds_since(t0);
      }
      adam.zero_grad();
      t0 = Clock::now();
      loss.backward();
      p[4] = seconds_since(t0);
      t0 = Clock::now();
      tower.backward(cut.grad());
      p[5] = seconds_since(t0);
      t0 = Clock::now();
      adam.step();
      p[6] = seconds_since(t0);
      if (i < 0) continue;
      for (int k = 0; k < N_PARTS; ++k) t[k] += p[k];
      whole += seconds_since(s0) - data_s;
    }
    Run& run = runs[kernels];
    for (int k = 0; k < N_PARTS; ++k) run.parts[k].push_back(t[k] / steps);
    run.step.push_back(whole / steps);
  };

  // The 13 convolutions alone: forward, and backward to the input and the weights.
  struct Conv {
    std::vector<double> forward, backward;
  };
  std::map<Kernels, Conv> convs;
  auto conv_profile = [&](Kernels kernels) {
    torch::manual_seed(0);
    std::vector<std::pair<int64_t, int64_t>> shapes = {{c.input_planes(), c.channels}};
    for (int i = 0; i < 2 * c.blocks; ++i) shapes.push_back({c.channels, c.channels});
    double f = 0, bw = 0;
    for (int r = -1; r < steps; ++r)
      for (const auto& [in, out] : shapes) {
        const auto x = torch::randn({batch, in, 8, 8})
                           .contiguous(torch::MemoryFormat::ChannelsLast)
                           .requires_grad_(in == c.channels);
        const auto w = torch::randn({out, in, 3, 3}).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
        const auto gy = torch::randn({batch, out, 8, 8}).contiguous(torch::MemoryFormat::ChannelsLast);
        torch::Tensor y;
        {
          AutocastScope autocast(precision, torch::kCPU);
          const auto t0 = Clock::now();
          y = kernels == Kernels::BOARD && board_conv_applies(x, w) ? board_conv3x3(x, w)
                                                                    : torch::conv2d(x, w, {}, 1, 1);
          if (r >= 0) f += seconds_since(t0);
        }
        const auto t0 = Clock::now();
        y.backward(gy.to(y.scalar_type()));
        if (r >= 0) bw += seconds_since(t0);
      }
    convs[kernels].forward.push_back(f / steps);
    convs[kernels].backward.push_back(bw / steps);
  };

  const Kernels both[] = {Kernels::TORCH, Kernels::BOARD};
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 2; ++k) {
      profile(both[(r + k) % 2]);
      conv_profile(both[(r + k) % 2]);
    }

  const double direct = 3 * c.forward_flops();
  fmt::print("  median of {} rounds of {} steps, ms a step (share of the step without data):\n", rounds, steps);
  fmt::print("  {:<24}", "");
  for (const Kernels k : both) fmt::print(" {:>18}", fmt::format("--kernels {}", kernels_name(k)));
  fmt::print("\n");
  for (int p = 0; p < N_PARTS; ++p) {
    fmt::print("  {:<24}", PARTS[p]);
    for (const Kernels k : both) {
      const double ms = 1e3 * median(runs[k].parts[p]);
      fmt::print(" {:>8.2f} ({:>5.1f}%)", ms, p == 0 ? 0.0 : 100 * ms / (1e3 * median(runs[k].step)));
    }
    fmt::print("\n");
  }
  fmt::print("  {:<24}", "step (without data)");
  for (const Kernels k : both) fmt::print(" {:>8.2f}         ", 1e3 * median(runs[k].step));
  fmt::print("\n  {:<24}", "samples/s");
  for (const Kernels k : both) fmt::print(" {:>8.0f}         ", batch / median(runs[k].step));
  fmt::print("\n  {:<24}", "effective GFLOP/s");
  for (const Kernels k : both) {
    const double g = direct * batch / median(runs[k].step) / 1e9;
    fmt::print(" {:>8.1f} ({:>4.0f}%)", g, fma > 0 ? 100 * g / fma : 0.0);
  }
  fmt::print("   (direct-convolution FLOPs, % of the FMA limit)\n");
  for (const char* what : {"13 convolutions forward", "13 convolutions backward"}) {
    fmt::print("  {:<24}", what);
    for (const Kernels k : both) {
      const auto& v = what[16] == 'f' ? convs[k].forward : convs[k].backward;
      fmt::print(" {:>8.2f} ms       ", 1e3 * median(v));
    }
    fmt::print("\n");
  }
  fmt::print("  board / torch: step {:.2f}x, convolutions forward {:.2f}x, backward {:.2f}x\n",
             median(runs[Kernels::TORCH].step) / median(runs[Kernels::BOARD].step),
             median(convs[Kernels::TORCH].forward) / median(convs[Kernels::BOARD].forward),
             median(convs[Kernels::TORCH].backward) / median(convs[Kernels::BOARD].backward));
  return 0;
}
