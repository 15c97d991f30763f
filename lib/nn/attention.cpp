// The attention net (nn/models.h: AttentionNet) and its encoder layer.
#include <cmath>

#include "encode/encode.h"
#include "nn/models.h"

namespace legalnet::nn {

EncoderLayerImpl::EncoderLayerImpl(int width, int heads_, int feed_forward) : heads(heads_) {
  norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
  qkv = register_module("qkv", torch::nn::Linear(width, 3 * width));
  proj = register_module("proj", torch::nn::Linear(width, width));
  norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
  ff_in = register_module("ff_in", torch::nn::Linear(width, feed_forward));
  ff_out = register_module("ff_out", torch::nn::Linear(feed_forward, width));
}

torch::Tensor EncoderLayerImpl::forward(torch::Tensor x) {
  const int64_t batch = x.size(0), squares = x.size(1), width = x.size(2), head_width = width / heads;
  // [B,64,3d] -> [3,B,heads,64,head_width]
  const auto qkv_heads = qkv(norm1(x)).view({batch, squares, 3, heads, head_width}).permute({2, 0, 3, 1, 4});
  const auto scores = torch::matmul(qkv_heads[0], qkv_heads[1].transpose(-2, -1)) / std::sqrt(double(head_width));
  const auto mixed = torch::matmul(torch::softmax(scores, -1), qkv_heads[2]);  // [B,heads,64,head_width]
  x = x + proj(mixed.transpose(1, 2).reshape({batch, squares, width}));
  return x + ff_out(torch::gelu(ff_in(norm2(x))));
}

AttentionNetImpl::AttentionNetImpl(const ModelConfig& c) {
  embed = register_module("embed", torch::nn::Linear(c.input_planes(), c.channels));
  square_embedding = register_parameter("square_embedding", torch::randn({64, c.channels}) * 0.02);
  layers = register_module("layers", torch::nn::ModuleList());
  for (int b = 0; b < c.blocks; ++b) layers->push_back(EncoderLayer(c.channels, c.heads, c.hidden));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.channels})));
  query = register_module("query", torch::nn::Linear(c.channels, c.channels));
  key = register_module("key", torch::nn::Linear(c.channels, c.channels));
  move_bias = register_parameter("move_bias", torch::zeros({encode::MOVE_INDICES}));
  auto never = torch::ones({encode::MOVE_INDICES}, torch::kBool);
  auto never_at = never.accessor<bool, 1>();
  for (int i = 0; i < encode::MOVE_INDICES; ++i) never_at[i] = !encode::index_is_geometric(i);
  impossible = register_buffer("impossible", never);
  train_geometric_moves_only();
}

torch::Tensor AttentionNetImpl::move_scores(torch::Tensor planes) {
  // planes [B,C,8,8] -> tokens [B,64,C] -> [B,64,d] -> (from, to) scores [B,64,64] -> [B,4096]
  auto x = embed(planes.flatten(2).transpose(1, 2)) + square_embedding;
  for (const auto& layer : *layers) x = layer->as<EncoderLayer>()->forward(x);
  x = norm(x);
  const auto scores = torch::matmul(query(x), key(x).transpose(1, 2)) / std::sqrt(double(x.size(2)));
  return scores.flatten(1) + move_bias;
}

torch::Tensor AttentionNetImpl::forward(torch::Tensor planes) {
  return move_scores(planes).masked_fill(impossible, FIXED_OFF_LOGIT);
}

torch::Tensor AttentionNetImpl::forward_trained(torch::Tensor planes) { return forward_gathered(planes).trained(); }

PolicyNet::Gathered AttentionNetImpl::forward_gathered(torch::Tensor planes) {
  const auto scores = move_scores(planes);
  return {scores, trained_moves(scores.device())};
}

// MODEL_SPECS' factory (nn/model_config.cpp).
std::shared_ptr<PolicyNet> make_attention(const ModelConfig& c) { return AttentionNet(c).ptr(); }

}  // namespace legalnet::nn
