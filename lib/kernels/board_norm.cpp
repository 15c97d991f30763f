#include "kernels/kernels.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace legalnet::nn {

namespace {

// Rows (squares of the batch, C channels each) per chunk: a chunk's sums are taken in float while
// it is in L1, and the chunks' are combined in double in their order, so the result is the same
// bytes for any thread count.
constexpr int64_t CHUNK_ROWS = 256;

// The per-chunk loops, compiled for AVX2 and for the baseline (the C channels of a row are the
// contiguous inner loop: the compiler vectorizes it); never AVX-512, so that
// ONEDNN_MAX_CPU_ISA=AVX2 imitates an AVX2-only CPU here as well.
#define CHUNK_KERNEL __attribute__((target_clones("avx2", "default")))

// A chunk's mean and sum of squared deviations from it, per channel (two passes over the chunk:
// no cancellation, unlike the sum of squares).
CHUNK_KERNEL void chunk_moments(const float* x, int64_t rows, int64_t channels, float* mean, float* m2) {
  std::fill(mean, mean + channels, 0.0f);
  std::fill(m2, m2 + channels, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) mean[c] += x[r * channels + c];
  for (int64_t c = 0; c < channels; ++c) mean[c] /= float(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const float d = x[r * channels + c] - mean[c];
      m2[c] += d * d;
    }
}

// y = relu(x * scale + shift [+ residual]).
CHUNK_KERNEL void chunk_output(const float* x, const float* residual, int64_t rows, int64_t channels,
                               const float* scale, const float* shift, float* y) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = r * channels + c;
      const float v = x[i] * scale[c] + shift[c] + (residual != nullptr ? residual[i] : 0.0f);
      y[i] = v > 0.0f ? v : 0.0f;
    }
}

// With g = gy where y > 0 (the ReLU's gradient), per channel: sum g and sum g (x - mean).
CHUNK_KERNEL void chunk_gradient_sums(const float* x, const float* y, const float* gy, int64_t rows, int64_t channels,
                                      const float* mean, float* sum_g, float* sum_gx) {
  std::fill(sum_g, sum_g + channels, 0.0f);
  std::fill(sum_gx, sum_gx + channels, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = r * channels + c;
      const float g = y[i] > 0.0f ? gy[i] : 0.0f;
      sum_g[c] += g;
      sum_gx[c] += g * (x[i] - mean[c]);
    }
}

// The input gradient a (g - b - (x - mean) d) (batch norm's, with the batch statistics'
// gradients folded into b and d) and the residual's, g (where g_residual is not null).
CHUNK_KERNEL void chunk_gradients(const float* __restrict x, const float* __restrict y, const float* __restrict gy,
                                  int64_t rows, int64_t channels, const float* __restrict mean,
                                  const float* __restrict a, const float* __restrict b, const float* __restrict d,
                                  float* __restrict gx, float* __restrict g_residual) {
  const int64_t n = rows * channels;
  if (g_residual != nullptr)
    for (int64_t i = 0; i < n; ++i) g_residual[i] = y[i] > 0.0f ? gy[i] : 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * channels;
    const float* __restrict yr = y + r * channels;
    const float* __restrict gr = gy + r * channels;
    float* __restrict out = gx + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const float g = yr[c] > 0.0f ? gr[c] : 0.0f;
      out[c] = a[c] * (g - b[c] - (xr[c] - mean[c]) * d[c]);
    }
  }
}

struct Chunks {
  int64_t rows, channels, count;
  Chunks(int64_t rows_, int64_t channels_)
      : rows(rows_), channels(channels_), count((rows_ + CHUNK_ROWS - 1) / CHUNK_ROWS) {}
  int64_t first(int64_t chunk) const { return chunk * CHUNK_ROWS; }
  int64_t size(int64_t chunk) const { return std::min(CHUNK_ROWS, rows - first(chunk)); }
  // f(chunk) for every chunk, on torch's threads.
  template <typename F>
  void each(F f) const {
    at::parallel_for(0, count, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) f(c);
    });
  }
};

// The batch's mean and biased variance per channel: each chunk's moments, combined in order
// (Chan et al.'s pairwise update, in double).
void batch_moments(const Chunks& ch, const float* x, std::vector<double>& mean, std::vector<double>& variance) {
  const int64_t C = ch.channels;
  std::vector<float> part_mean(size_t(ch.count * C)), part_m2(size_t(ch.count * C));
  ch.each([&](int64_t k) {
    chunk_moments(x + ch.first(k) * C, ch.size(k), C, &part_mean[size_t(k * C)], &part_m2[size_t(k * C)]);
  });
  mean.assign(size_t(C), 0.0);
  std::vector<double> m2(size_t(C), 0.0);
  double n = 0;
  for (int64_t k = 0; k < ch.count; ++k) {
    const double nk = double(ch.size(k)), total = n + nk;
    for (int64_t c = 0; c < C; ++c) {
      const double delta = double(part_mean[size_t(k * C + c)]) - mean[size_t(c)];
      mean[size_t(c)] += delta * nk / total;
      m2[size_t(c)] += double(part_m2[size_t(k * C + c)]) + delta * delta * n * nk / total;
    }
    n = total;
  }
  variance.resize(size_t(C));
  for (int64_t c = 0; c < C; ++c) variance[size_t(c)] = m2[size_t(c)] / n;
}

torch::Tensor floats(const std::vector<double>& v) {
  auto t = torch::empty({int64_t(v.size())});
  std::copy(v.begin(), v.end(), t.data_ptr<float>());
  return t;
}

// relu(x * scale + shift [+ residual]) per channel over channels-last boards (residual may be
// undefined), on torch's threads: the forward pass of both modes.
torch::Tensor scaled_relu(const torch::Tensor& x, const torch::Tensor& residual, const std::vector<double>& scale,
                          const std::vector<double>& shift) {
  const int64_t C = x.size(1);
  const auto scale_t = floats(scale), shift_t = floats(shift);
  torch::Tensor rc;
  if (residual.defined()) rc = residual.contiguous(torch::MemoryFormat::ChannelsLast);
  auto y = torch::empty_like(x, torch::MemoryFormat::ChannelsLast);
  const Chunks ch(x.numel() / C, C);
  const float* xp = x.data_ptr<float>();
  const float* rp = rc.defined() ? rc.data_ptr<float>() : nullptr;
  float* yp = y.data_ptr<float>();
  ch.each([&](int64_t k) {
    const int64_t o = ch.first(k) * C;
    chunk_output(xp + o, rp != nullptr ? rp + o : nullptr, ch.size(k), C, scale_t.data_ptr<float>(),
                 shift_t.data_ptr<float>(), yp + o);
  });
  return y;
}

struct NormReluFunction : torch::autograd::Function<NormReluFunction> {
  // x [B,C,H,W] channels-last; weight, bias [C]; residual as x or empty (autograd's apply
  // takes no undefined tensor); the running statistics are updated in place with the factor
  // given (torch's momentum).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias, const torch::Tensor& residual,
                               torch::Tensor running_mean, torch::Tensor running_var, double factor, double eps) {
    const int64_t C = x.size(1);
    const Chunks ch(x.numel() / C, C);
    const auto xc = x.contiguous(torch::MemoryFormat::ChannelsLast);
    std::vector<double> mean, variance;
    batch_moments(ch, xc.data_ptr<float>(), mean, variance);

    const auto n_channels = static_cast<size_t>(C);
    std::vector<double> invstd(n_channels), scale(n_channels), shift(n_channels);
    const auto w = weight.contiguous(), b = bias.contiguous();
    for (int64_t c = 0; c < C; ++c) {
      invstd[size_t(c)] = 1.0 / std::sqrt(variance[size_t(c)] + eps);
      scale[size_t(c)] = double(w.data_ptr<float>()[c]) * invstd[size_t(c)];
      shift[size_t(c)] = double(b.data_ptr<float>()[c]) - mean[size_t(c)] * scale[size_t(c)];
    }
    const bool has_residual = residual.numel() > 0;
    auto y = scaled_relu(xc, has_residual ? residual : torch::Tensor(), scale, shift);

    const auto mean_t = floats(mean);
    {
      torch::NoGradGuard no_grad;
      const double n = double(ch.rows);
      std::vector<double> unbiased(variance);
      for (double& v : unbiased) v *= n / std::max(1.0, n - 1);
      running_mean.mul_(1 - factor).add_(mean_t, factor);
      running_var.mul_(1 - factor).add_(floats(unbiased), factor);
    }
    ctx->save_for_backward({xc, y, w, mean_t, floats(invstd)});
    ctx->saved_data["residual"] = has_residual;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &y = saved[1], &w = saved[2], &mean_t = saved[3], &invstd_t = saved[4];
    const int64_t C = x.size(1);
    const Chunks ch(x.numel() / C, C);
    const auto gy = grads[0].contiguous(torch::MemoryFormat::ChannelsLast);
    const float *xp = x.data_ptr<float>(), *yp = y.data_ptr<float>(), *gp = gy.data_ptr<float>();
    const float* mean = mean_t.data_ptr<float>();

    std::vector<float> part_g(size_t(ch.count * C)), part_gx(size_t(ch.count * C));
    ch.each([&](int64_t k) {
      const int64_t o = ch.first(k) * C;
      chunk_gradient_sums(xp + o, yp + o, gp + o, ch.size(k), C, mean, &part_g[size_t(k * C)], &part_gx[size_t(k * C)]);
    });
    const auto n_channels = static_cast<size_t>(C);
    std::vector<double> sum_g(n_channels, 0.0), sum_gx(n_channels, 0.0);
    for (int64_t k = 0; k < ch.count; ++k)
      for (int64_t c = 0; c < C; ++c) {
        sum_g[size_t(c)] += part_g[size_t(k * C + c)];
        sum_gx[size_t(c)] += part_gx[size_t(k * C + c)];
      }

    const double n = double(ch.rows);
    std::vector<double> a(n_channels), b(n_channels), d(n_channels), g_weight(n_channels);
    for (int64_t c = 0; c < C; ++c) {
      const double is = invstd_t.data_ptr<float>()[c];
      a[size_t(c)] = double(w.data_ptr<float>()[c]) * is;
      b[size_t(c)] = sum_g[size_t(c)] / n;
      d[size_t(c)] = is * is * sum_gx[size_t(c)] / n;
      g_weight[size_t(c)] = is * sum_gx[size_t(c)];
    }
    const auto a_t = floats(a), b_t = floats(b), d_t = floats(d);
    const bool has_residual = ctx->saved_data["residual"].toBool();
    auto gx = torch::empty_like(x, torch::MemoryFormat::ChannelsLast);
    torch::Tensor g_residual;
    if (has_residual) g_residual = torch::empty_like(x, torch::MemoryFormat::ChannelsLast);
    float* gxp = gx.data_ptr<float>();
    float* grp = has_residual ? g_residual.data_ptr<float>() : nullptr;
    ch.each([&](int64_t k) {
      const int64_t o = ch.first(k) * C;
      chunk_gradients(xp + o, yp + o, gp + o, ch.size(k), C, mean, a_t.data_ptr<float>(), b_t.data_ptr<float>(),
                      d_t.data_ptr<float>(), gxp + o, grp != nullptr ? grp + o : nullptr);
    });
    return {gx,
            floats(g_weight),
            floats(sum_g),
            g_residual,
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

}  // namespace

bool board_norm_applies(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& norm) {
  const auto& o = norm.options;
  // In evaluation mode the node has no backward: a pass that needs gradients goes to torch.
  const bool mode_ok = norm.is_training() ? x.numel() > x.size(1) : !torch::GradMode::is_enabled();
  return mode_ok && o.affine() && o.track_running_stats() && x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
         norm.weight.scalar_type() == torch::kFloat && norm.running_var.scalar_type() == torch::kFloat &&
         !at::autocast::is_autocast_enabled(torch::kCPU) && x.dim() == 4 && x.size(1) == o.num_features() &&
         x.is_contiguous(torch::MemoryFormat::ChannelsLast);
}

namespace {

// Evaluation mode: the running statistics fold into one scale and shift a channel, and the
// norm, the residual's add and the ReLU are one pass over the boards where torch makes three
// (evaluate's profile: docs/benchmarks.md#log-2026-12-06-inference).
torch::Tensor norm_relu_inference(const torch::Tensor& x, const torch::nn::BatchNorm2dImpl& norm,
                                  const torch::Tensor& residual) {
  const int64_t C = x.size(1);
  const auto n_channels = static_cast<size_t>(C);
  const auto w = norm.weight.contiguous(), b = norm.bias.contiguous();
  const auto mean = norm.running_mean.contiguous(), var = norm.running_var.contiguous();
  std::vector<double> scale(n_channels), shift(n_channels);
  for (int64_t c = 0; c < C; ++c) {
    const double s = double(w.data_ptr<float>()[c]) / std::sqrt(double(var.data_ptr<float>()[c]) + norm.options.eps());
    scale[size_t(c)] = s;
    shift[size_t(c)] = double(b.data_ptr<float>()[c]) - double(mean.data_ptr<float>()[c]) * s;
  }
  return scaled_relu(x, residual, scale, shift);
}

}  // namespace

torch::Tensor board_norm_relu(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& norm, const torch::Tensor& residual) {
  TORCH_CHECK(!residual.defined() || residual.sizes() == x.sizes(), "board_norm_relu: the residual's shape ",
              residual.sizes(), " is not the input's ", x.sizes());
  if (!norm.is_training()) return norm_relu_inference(x, norm, residual);
  // The batch count and the running statistics' factor as torch::nn::BatchNorm2d's forward has them.
  {
    torch::NoGradGuard no_grad;
    norm.num_batches_tracked += 1;
  }
  const auto& momentum = norm.options.momentum();
  const double factor = momentum.has_value() ? *momentum : 1.0 / double(norm.num_batches_tracked.item<int64_t>());
  const auto none = torch::empty({0});
  return NormReluFunction::apply(x, norm.weight, norm.bias, residual.defined() ? residual : none, norm.running_mean,
                                 norm.running_var, factor, norm.options.eps());
}

}  // namespace legalnet::nn
