// The bf16 board convolution (kernels.h, board_conv3x3_bf16): torch's forward and input
// gradient, our weight gradient (board_wgrad_bf16.h), in one autograd node.
#include <ATen/Parallel.h>

#include <algorithm>
#include <memory>

#include "kernels/board_shapes.h"
#include "kernels/board_wgrad_bf16.h"
#include "kernels/kernels.h"

namespace legalnet::nn {
namespace {

// The weight gradient of a bf16 convolution (board_wgrad_bf16.h): x [B,C,8,8] and the output
// gradient gy [B,K,8,8], both bf16 channels-last; the result is bf16 [K,C,3,3] in channels-last
// strides (the memory is [K][3][3][C]). Each segment of board pairs is interleaved and summed by
// one thread, and the segments' sums are added in order: the same bytes for any thread count.
torch::Tensor bf16_weight_gradient(const torch::Tensor& x, const torch::Tensor& gy) {
  const Bf16WgradProblem p{reinterpret_cast<const uint16_t*>(x.data_ptr<at::BFloat16>()),
                           reinterpret_cast<const uint16_t*>(gy.data_ptr<at::BFloat16>()), x.size(0), x.size(1),
                           gy.size(1)};
  // Every word of the three buffers is written before it is read (no zero fill: 3 MB a call).
  const std::unique_ptr<uint32_t[]> x_pairs(new uint32_t[size_t(p.x_pairs_words())]),
      g_pairs(new uint32_t[size_t(p.g_pairs_words())]);
  const std::unique_ptr<float[]> sums(new float[size_t(p.segments() * p.weight_floats())]);
  const bool avx512 = cpu_has_avx512_bf16();
  at::parallel_for(0, p.segments(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      interleave_board_pairs(p, s * WGRAD_SEGMENT_PAIRS, std::min(p.pairs(), (s + 1) * WGRAD_SEGMENT_PAIRS),
                             x_pairs.get(), g_pairs.get());
      segment_weight_grad(p, s, x_pairs.get(), g_pairs.get(), sums.get() + s * p.weight_floats(), avx512);
    }
  });
  auto dw = torch::empty({p.outputs, 3, 3, p.channels});
  float* out = dw.data_ptr<float>();
  at::parallel_for(0, p.weight_floats(), 1024, [&](int64_t begin, int64_t end) {
    std::copy(sums.get() + begin, sums.get() + end, out + begin);
    for (int64_t s = 1; s < p.segments(); ++s) {
      const float* part = sums.get() + s * p.weight_floats();
      for (int64_t i = begin; i < end; ++i) out[i] += part[i];
    }
  });
  return dw.permute({0, 3, 1, 2}).to(torch::kBFloat16);
}

// A bf16 3x3 convolution whose forward and input gradient are torch's (oneDNN's, 420-450 GFLOP/s
// on 2 Zen 4 cores; the same calls on the same tensors as torch's autograd makes) and whose
// weight gradient is bf16_weight_gradient.
struct Bf16ConvFunction : torch::autograd::Function<Bf16ConvFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight) {
    ctx->save_for_backward({x, weight});
    return at::conv2d(x, weight, {}, 1, 1);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& weight = saved[1];
    const auto& gy = grads[0];
    torch::Tensor gx, gw;
    if (ctx->needs_input_grad(0))
      gx = std::get<0>(at::convolution_backward(gy, x, weight, std::nullopt, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1,
                                                {true, false, false}));
    if (ctx->needs_input_grad(1)) {
      const auto cl = torch::MemoryFormat::ChannelsLast;  // a copy only where the net is not channels-last
      gw = bf16_weight_gradient(x.contiguous(cl), gy.to(torch::kBFloat16).contiguous(cl));
    }
    return {gx, gw};
  }
};

}  // namespace

bool board_conv_bf16_applies(const torch::Tensor& x, const torch::Tensor& weight) {
  return has_bf16_weight_gradient() && torch::GradMode::is_enabled() && weight.requires_grad() && x.device().is_cpu() &&
         x.scalar_type() == torch::kBFloat16 && weight.device().is_cpu() && board_shapes(x, weight) &&
         bf16_wgrad_shapes(x.size(1), weight.size(0));
}

torch::Tensor board_conv3x3_bf16(const torch::Tensor& x, const torch::Tensor& weight) {
  return Bf16ConvFunction::apply(x, weight.to(torch::kBFloat16));
}

}  // namespace legalnet::nn
