// Lines of sight (ModelConfig::sight, nn/models.h) and the table of the squares between two
// squares that it shares with the paths (ModelConfig::paths).
#include <cmath>
#include <cstdlib>

#include "encode/encode.h"
#include "nn/models.h"

namespace legalnet::nn {
namespace {

constexpr int64_t OFFSETS = 15 * 15;  // rows and columns -7..7 apart

std::vector<int64_t> offsets() {
  std::vector<int64_t> v(64 * 64);
  for (int t = 0; t < 64; ++t)
    for (int s = 0; s < 64; ++s) v[size_t(t * 64 + s)] = (s / 8 - t / 8 + 7) * 15 + (s % 8 - t % 8 + 7);
  return v;
}

}  // namespace

torch::Tensor between_squares() {
  auto m = torch::zeros({64, encode::MOVE_INDICES});
  auto at = m.accessor<float, 2>();
  for (int i = 0; i < encode::MOVE_INDICES; ++i) {
    if (!encode::index_is_geometric(i)) continue;
    const int from = i / 64, to = i % 64;
    const int rows = to / 8 - from / 8, columns = to % 8 - from % 8;
    if (rows != 0 && columns != 0 && std::abs(rows) != std::abs(columns)) continue;  // a knight's jump
    const int step = 8 * ((rows > 0) - (rows < 0)) + ((columns > 0) - (columns < 0));
    for (int s = from + step; s != to; s += step) at[s][i] = 1.0f;
  }
  return m;
}

SightImpl::SightImpl(int channels) : heads(sight_heads(channels)), offset_of(offsets()), between(between_squares()) {
  qkv = register_module("qkv", torch::nn::Linear(torch::nn::LinearOptions(channels, 3 * channels).bias(false)));
  out = register_module("out", torch::nn::Linear(torch::nn::LinearOptions(channels, channels).bias(false)));
  blocking = register_module("blocking", torch::nn::Linear(channels, heads));
  offset_bias = register_parameter("offset_bias", torch::zeros({heads, OFFSETS}));
  torch::NoGradGuard no_grad;
  // The layer starts as the identity (its branch zero) and with little blocking (softplus(-4) =
  // 0.018 a square), so the tower below it trains as it would without it at first.
  out->weight.zero_();
  blocking->bias.fill_(-4.0);
}

torch::Tensor SightImpl::forward(torch::Tensor x) {
  const int64_t batch = x.size(0), channels = x.size(1), width = channels / heads;
  const auto squares = x.permute({0, 2, 3, 1}).reshape({batch, 64, channels});
  // [B,64,3C] -> [3,B,heads,64,width]
  const auto qkv_heads = qkv(squares).view({batch, 64, 3, heads, width}).permute({2, 0, 3, 1, 4});
  // What blocks each pair's line, per head: [B,64,heads] -> [B*heads,64] x [64,4096] -> [B,heads,64,64]
  const auto cost = torch::softplus(blocking(squares)).transpose(1, 2).reshape({batch * heads, 64});
  const auto& table = between.on(x.device());
  const auto costs = torch::mm(cost, table.to(cost.scalar_type())).view({batch, heads, 64, 64});
  const auto bias = offset_bias.index_select(1, offset_of.on(x.device())).view({1, heads, 64, 64});
  const auto scores =
      torch::matmul(qkv_heads[0], qkv_heads[1].transpose(-2, -1)) / std::sqrt(double(width)) + bias - costs;
  const auto mixed = torch::matmul(torch::softmax(scores, -1), qkv_heads[2]);  // [B,heads,64,width]
  const auto y = out(mixed.transpose(1, 2).reshape({batch, 64, channels}));
  return x + y.view({batch, 8, 8, channels}).permute({0, 3, 1, 2});
}

}  // namespace legalnet::nn
