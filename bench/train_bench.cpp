// Training throughput of the C++ loop, in one run on one machine:
//   - this machine's compute peak in fp32 and bf16 (the best of large matmuls and large
//     convolutions), the ceiling of any training loop;
//   - the same steps on batches already in memory (no data loading) in fp32 and in bf16
//     autocast, each in the default and the channels-last layout, with train's loss
//     (nn::training_loss: one node on a CPU); in channels-last once more with the same loss
//     composed of torch's ops (gather, cast, BCE), and in bf16 with the loss on all 4096
//     logits instead of the trained ones (nn/loss.h);
//   - the background loader over rows in memory and streamed from the file, in the
//     precision train's --precision auto would pick, against the same steps on ready batches:
//     the loaders' overhead.
// Each line gives samples/s, the model's FLOPs per position and the achieved GFLOP/s (a
// training step is counted as 3 forward passes) and its share of the matching peak. The
// variants run in turn, ROUNDS times (each round starting with another), and the median of
// each is reported, so that a slow spell of a shared machine does not land on one of them.
// DEVICE=cuda (or cuda:N) in the environment measures a GPU instead: its matmul peak in fp32
// (strict IEEE), tf32 and bf16, and the same steps in each of the three precisions on ready
// batches already on the GPU and through the memory and stream loaders (which copy each batch
// from pinned memory), timed between torch::cuda::synchronize() calls. Without DEVICE, or with
// DEVICE=cpu, the output is the CPU's above. Every variant runs the kernels train's --kernels
// auto would (kernels/kernels.h: the board kernels for a resnet on a CPU in fp32), on the policy
// head train's --policy-head auto gives the kind (a resnet's pairs head).
// Usage: [DEVICE=cuda] legalnet_train_bench DATASET.h5 KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS]
//        [ROUNDS] [INPUTS]   (BATCH: train's --batch-size default when left out)
#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "compute/device.h"
#include "kernels/kernels.h"
#include "nn/forward.h"
#include "nn/loss.h"
#include "nn/models.h"
#include "run/train/optimizer.h"
#include "run/train/options.h"
#include "train/batches.h"
#include "train/stream.h"

using namespace legalnet;
using namespace legalnet::nn;
using namespace legalnet::train;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// This machine's compute ceiling in `dtype`, in GFLOP/s: the best of a few 2048x2048 matmuls
// (OpenBLAS in fp32, oneDNN in bf16) and of a few 256-channel 3x3 convolutions of 256 boards in
// channels-last (oneDNN in both: its fp32 kernels beat OpenBLAS's matmul here by 2-4x).
double compute_peak(torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  const int64_t n = 2048, channels = 256, boards = 256;
  const auto a = torch::randn({n, n}).to(dtype), b = torch::randn({n, n}).to(dtype);
  const auto x = torch::randn({boards, channels, 8, 8}).to(dtype).contiguous(torch::MemoryFormat::ChannelsLast);
  const auto w = torch::randn({channels, channels, 3, 3}).to(dtype).contiguous(torch::MemoryFormat::ChannelsLast);
  double best = 0;
  // The convolutions first: OpenBLAS's threads spin for a while after a matmul and would slow
  // the OpenMP threads of the convolutions that follow.
  for (int i = 0; i < 8; ++i) {  // the first tries build oneDNN's kernels and fault their pages in
    const auto t0 = std::chrono::steady_clock::now();
    const auto y = torch::conv2d(x, w, {}, 1, 1);
    best = std::max(best, 2.0 * boards * 64 * channels * channels * 9 / seconds_since(t0) / 1e9);
  }
  for (int i = 0; i < 4; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto c = torch::mm(a, b);
    best = std::max(best, 2.0 * n * n * n / seconds_since(t0) / 1e9);
  }
  return best;
}

// The GPU's matmul ceiling in `precision`, in GFLOP/s: the best of a few 8192x8192 matmuls in
// fp32 (strict IEEE or TF32, as configure_for_speed sets it) or bf16, each timed between
// synchronizations (a launch returns before the GPU has finished).
double cuda_peak(Precision precision, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  configure_for_speed(device, precision);
  const int64_t n = 8192;
  const auto dtype = precision == Precision::BF16 ? torch::kBFloat16 : torch::kFloat32;
  const auto options = torch::TensorOptions().device(device).dtype(dtype);
  const auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  double best = 0;
  for (int i = 0; i < 6; ++i) {  // the first builds cuBLAS's handle and picks its kernel
    torch::cuda::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    const auto c = torch::mm(a, b);
    torch::cuda::synchronize();
    best = std::max(best, 2.0 * n * n * n / seconds_since(t0) / 1e9);
  }
  return best;
}

// The clock is read once the GPU has finished what was queued (nothing to wait for on a CPU).
void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    fmt::print(stderr, "usage: {} DATASET KIND HIDDEN BLOCKS CHANNELS [STEPS] [BATCH] [THREADS] [ROUNDS] [INPUTS]\n",
               argv[0]);
    return 2;
  }
  ModelConfig c;
  c.kind = parse_model_kind(argv[2]);
  c.hidden = std::atoi(argv[3]);
  c.blocks = std::atoi(argv[4]);
  c.channels = std::atoi(argv[5]);
  c.inputs = encode::parse_input_kind(argc > 10 ? argv[10] : "state");
  c.policy_head = PolicyHead::AUTO;  // the head train gives the kind
  c = run::trained_model(c);
  const char* device_spec = std::getenv("DEVICE");
  torch::Device device = torch::kCPU;
  try {
    device = pick_device(device_spec && *device_spec ? device_spec : "cpu");
  } catch (const std::exception& e) {  // the reason CUDA is missing, in one line
    fmt::print(stderr, "legalnet_train_bench: DEVICE={}: {}\n", device_spec, e.what());
    return 1;
  }
  const bool cuda = device.is_cuda();
  const int steps = argc > 6 ? std::atoi(argv[6]) : 60;
  const int batch = argc > 7 ? std::atoi(argv[7]) : run::TrainOptions{}.batch_size;
  keep_freed_memory();  // as train and evaluate
  configure_threads(argc > 8 ? std::atoi(argv[8]) : 0);
  const int rounds = argc > 9 ? std::atoi(argv[9]) : 3;
  LoadOptions load;
  load.quiet = true;
  load.max_rows = uint64_t(batch) * 64;
  const CompactPositions data = load_positions({argv[1]}, load);
  const Precision chosen =
      resolve_precision("auto", device, c.kind == ModelKind::RESNET);  // as train with --kernels auto
  StreamOptions stream_options;
  stream_options.paths = {argv[1]};
  stream_options.batch_size = batch;
  stream_options.shuffle_buffer = 1 << 16;
  stream_options.inputs = c.inputs;

  struct Variant {
    const char* name;
    Precision precision;
    bool channels_last;
    enum { READY, MEMORY, STREAM } data;
    // train's loss (nn::training_loss), the same from torch's ops, or BCE on all 4096 logits
    enum Loss { TRAINED, TORCH_OPS, ON_4096 } loss = TRAINED;
  };
  enum { FP32, FP32_CL, BF16, BF16_CL, FP32_CL_OPS, BF16_CL_OPS, BF16_CL_4096, MEMORY, STREAM };
  const std::vector<Variant> cpu_variants = {
      {"fp32, ready batches", Precision::FP32, false, Variant::READY},
      {"fp32 channels-last, ready", Precision::FP32, true, Variant::READY},
      {"bf16, ready batches", Precision::BF16, false, Variant::READY},
      {"bf16 channels-last, ready", Precision::BF16, true, Variant::READY},
      {"fp32 channels-last, torch's loss", Precision::FP32, true, Variant::READY, Variant::TORCH_OPS},
      {"bf16 channels-last, torch's loss", Precision::BF16, true, Variant::READY, Variant::TORCH_OPS},
      {"bf16 channels-last, loss on 4096", Precision::BF16, true, Variant::READY, Variant::ON_4096},
      {"auto (as train), memory loader", chosen, false, Variant::MEMORY},
      {"auto (as train), stream loader", chosen, false, Variant::STREAM},
  };
  // On a GPU each precision with each data source, in train's memory format (channels_last
  // unused: choose_memory_format decides as in train).
  const std::vector<Variant> cuda_variants = {
      {"fp32, ready batches", Precision::FP32, false, Variant::READY},
      {"fp32, memory loader", Precision::FP32, false, Variant::MEMORY},
      {"fp32, stream loader", Precision::FP32, false, Variant::STREAM},
      {"tf32, ready batches", Precision::TF32, false, Variant::READY},
      {"tf32, memory loader", Precision::TF32, false, Variant::MEMORY},
      {"tf32, stream loader", Precision::TF32, false, Variant::STREAM},
      {"bf16, ready batches", Precision::BF16, false, Variant::READY},
      {"bf16, memory loader", Precision::BF16, false, Variant::MEMORY},
      {"bf16, stream loader", Precision::BF16, false, Variant::STREAM},
  };
  const std::vector<Variant>& variants = cuda ? cuda_variants : cpu_variants;
  std::vector<uint32_t> order = epoch_order(data, 0, 0);
  std::vector<Batch> ready;
  for (int i = 0; i < 8; ++i) {
    Batch b = make_batch(data, order.data() + size_t(i) * size_t(batch), size_t(batch), false, c.inputs);
    ready.push_back({b.planes.to(device), b.targets.to(device)});
  }

  auto run = [&](const Variant& v) {
    torch::manual_seed(0);
    auto net = make_model(c);
    if (cuda) {  // as train: the net on the GPU in the layout it picks, fp32 as asked
      configure_for_speed(device, v.precision);
      net->to(device);
      choose_memory_format(*net);
    } else if (v.data == Variant::READY) {
      if (v.channels_last) net->use_channels_last();
    } else {
      choose_memory_format(*net);  // as train does
    }
    net->use_kernels(resolve_kernels(Kernels::AUTO, device, v.precision));  // what train's --kernels auto runs
    run::FusedAdam<torch::optim::Adam> adam(net->parameters(), torch::optim::AdamOptions(1e-3));  // train's
    std::unique_ptr<BatchLoader> loader;
    if (v.data == Variant::MEMORY)
      loader = std::make_unique<BatchLoader>(
          std::make_unique<MemoryBatches>(data, batch, 0, RowWeights{}, BatchSlice{}, c.inputs), 0, device);
    if (v.data == Variant::STREAM)
      loader = std::make_unique<BatchLoader>(std::make_unique<StreamBatches>(stream_options), 0, device);
    auto step = [&](int i) {
      Batch b = loader ? loader->next() : ready[size_t(i) % ready.size()];
      auto loss = v.loss == Variant::ON_4096
                      ? torch::binary_cross_entropy_with_logits(forward_logits(*net, b.planes, v.precision), b.targets)
                  : v.loss == Variant::TORCH_OPS
                      ? policy_loss(forward_trained_logits(*net, b.planes, b.targets, v.precision))
                      : training_loss(*net, b.planes, b.targets, v.precision);
      adam.zero_grad();
      loss.backward();
      adam.step();
    };
    // Warm-up (oneDNN builds its kernels; the stream fills its shuffle buffer).
    for (int i = 0; i < 5; ++i) step(i);
    synchronize(device);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step(i);
    synchronize(device);
    return double(steps) * batch / seconds_since(t0);
  };

  double peak_bf16 = 0, peak_fp32 = 0, peak_tf32 = 0;
  if (cuda) {
    peak_fp32 = cuda_peak(Precision::FP32, device);
    peak_tf32 = cuda_peak(Precision::TF32, device);
    peak_bf16 = cuda_peak(Precision::BF16, device);
  } else {
    peak_bf16 = compute_peak(torch::kBFloat16);
    peak_fp32 = compute_peak(torch::kFloat32);
  }
  std::vector<std::vector<double>> rates(variants.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < variants.size(); ++k) {
      const size_t v = (size_t(r) + k) % variants.size();
      rates[v].push_back(run(variants[v]));
    }

  // The loaders' work itself, timed alone on this thread: what a batch would cost the loop if
  // the background thread did not overlap it with training (an upper bound that the noise of
  // a shared machine does not blur).
  auto seconds_per_batch = [&](BatchSource& source) {
    source.batch(0, cuda);  // the stream fills its buffer here; batches for a GPU are pinned
    const int n = 200;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 1; i <= n; ++i) source.batch(i, cuda);
    return seconds_since(t0) / n;
  };
  MemoryBatches memory_source(data, batch, 0, RowWeights{}, BatchSlice{}, c.inputs);
  StreamBatches stream_source(stream_options);

  const double flops = c.forward_flops();
  if (cuda) {
    fmt::print(
        "{} (inputs {}), batch {}, {:.2f} MFLOP a position forward, on {}; matmul peak {:.0f} GFLOP/s fp32, {:.0f} "
        "tf32, {:.0f} bf16 (median of {} rounds of {} steps)\n",
        c.describe(), c.inputs_name(), batch, flops / 1e6, device.str(), peak_fp32, peak_tf32, peak_bf16, rounds,
        steps);
    std::vector<double> medians;
    for (size_t v = 0; v < variants.size(); ++v) {
      medians.push_back(median(rates[v]));
      const double achieved = 3 * flops * medians.back() / 1e9;
      const Precision p = variants[v].precision;
      const double peak = p == Precision::BF16 ? peak_bf16 : p == Precision::TF32 ? peak_tf32 : peak_fp32;
      fmt::print("  {:<32} {:>7.0f} samples/s  {:>7.1f} GFLOP/s = {:>5.1f}% of the {} peak\n", variants[v].name,
                 medians.back(), achieved, 100 * achieved / peak, precision_name(p));
    }
    // cuda_variants: three per precision (ready, memory, stream), fp32 then tf32 then bf16.
    fmt::print("  tf32 / fp32: {:.2f}x, bf16 / fp32: {:.2f}x (ready batches)\n", medians[3] / medians[0],
               medians[6] / medians[0]);
    const double memory_work = seconds_per_batch(memory_source), stream_work = seconds_per_batch(stream_source);
    for (size_t k = 0; k < 3; ++k) {
      const double ready_rate = medians[3 * k], memory_rate = medians[3 * k + 1], stream_rate = medians[3 * k + 2];
      fmt::print(
          "  loaders ({}): overhead {:+.1f}% memory, {:+.1f}% stream; their work {:.2f} / {:.2f} ms a batch, a "
          "{:.2f} ms step\n",
          precision_name(variants[3 * k].precision), 100 * (1 - memory_rate / ready_rate),
          100 * (1 - stream_rate / ready_rate), 1e3 * memory_work, 1e3 * stream_work, 1e3 * batch / ready_rate);
    }
    return 0;
  }
  fmt::print(
      "{} (inputs {}), batch {}, {:.2f} MFLOP a position forward; compute peak {:.0f} GFLOP/s fp32, {:.0f} bf16 "
      "(median of {} rounds of {} steps)\n",
      c.describe(), c.inputs_name(), batch, flops / 1e6, peak_fp32, peak_bf16, rounds, steps);
  std::vector<double> medians;
  for (size_t v = 0; v < variants.size(); ++v) {
    medians.push_back(median(rates[v]));
    const double achieved = 3 * flops * medians.back() / 1e9;
    const double peak = variants[v].precision == Precision::BF16 ? peak_bf16 : peak_fp32;
    fmt::print("  {:<32} {:>7.0f} samples/s  {:>6.1f} GFLOP/s = {:>5.1f}% of the {} peak\n", variants[v].name,
               medians.back(), achieved, 100 * achieved / peak, precision_name(variants[v].precision));
  }
  // What the loaders are compared with: the ready-batch loop in train's own configuration.
  auto probe = make_model(c);
  choose_memory_format(*probe);
  const bool chosen_cl = probe->channels_last();
  const double chosen_ready =
      medians[chosen == Precision::BF16 ? (chosen_cl ? BF16_CL : BF16) : (chosen_cl ? FP32_CL : FP32)];
  const double step_seconds = batch / chosen_ready;
  const double memory_work = seconds_per_batch(memory_source), stream_work = seconds_per_batch(stream_source);
  fmt::print(
      "  bf16 / fp32 (ready batches, channels-last): {:.2f}x; channels-last: {:.2f}x in fp32, {:.2f}x in bf16; the "
      "trained logits' loss {:.2f}x the loss on 4096; train's loss node {:.2f}x torch's ops in fp32, {:.2f}x in "
      "bf16\n",
      medians[BF16_CL] / medians[FP32_CL], medians[FP32_CL] / medians[FP32], medians[BF16_CL] / medians[BF16],
      medians[BF16_CL_OPS] / medians[BF16_CL_4096], medians[FP32_CL] / medians[FP32_CL_OPS],
      medians[BF16_CL] / medians[BF16_CL_OPS]);
  fmt::print(
      "  loaders ({}): overhead {:+.1f}% memory, {:+.1f}% stream; their work {:.2f} / {:.2f} ms a batch = "
      "{:.1f}% / {:.1f}% of a {:.1f} ms step\n",
      precision_name(chosen), 100 * (1 - medians[MEMORY] / chosen_ready), 100 * (1 - medians[STREAM] / chosen_ready),
      1e3 * memory_work, 1e3 * stream_work, 100 * memory_work / step_seconds, 100 * stream_work / step_seconds,
      1e3 * step_seconds);
  return 0;
}
