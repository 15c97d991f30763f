// The networks: libtorch modules mapping input planes [B,C,8,8] (C from the input kind,
// encode/inputs.h) to move logits [B,4096] in the input's frame.
#pragma once

#include <torch/torch.h>

#include "nn/model_config.h"

namespace legalnet::nn {

// What every model is: planes in (float [B,C,8,8]), one logit per move index out.
class PolicyNet : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor planes) = 0;
  // Keeps 4-d weights (convolutions) in channels-last layout and asks forward_logits
  // (precision.h) for inputs in that layout: oneDNN's bf16 convolutions run faster on it.
  void use_channels_last();
  bool channels_last() const { return channels_last_; }

 private:
  bool channels_last_ = false;
};

// Scatters a compact set of K logits into the 4096 move indices: index i takes
// compact[:, source[i]], and source[i] == K (the impossible indices) takes a constant far below
// zero (a buffer, so it moves with the model and never trains).
struct IndexHeadImpl : torch::nn::Module {
  explicit IndexHeadImpl(const std::vector<int64_t>& source);
  // compact [B, K] -> logits [B, 4096]
  torch::Tensor forward(torch::Tensor compact);
  torch::Tensor source, fixed_off;
};
TORCH_MODULE(IndexHead);

// The predecessor's first net: flatten 448 -> hidden -> ReLU -> 4096 (or the 1792 possible).
struct MlpImpl : PolicyNet {
  explicit MlpImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::nn::Linear hidden{nullptr}, out{nullptr};
  IndexHead head{nullptr};
};
TORCH_MODULE(Mlp);

// The predecessor's best family: blocks of Conv3x3 -> BatchNorm -> ReLU, then FC -> 4096.
struct ConvNetImpl : PolicyNet {
  explicit ConvNetImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::nn::Sequential tower{nullptr};
  torch::nn::Linear hidden{nullptr}, out{nullptr};
  IndexHead head{nullptr};
};
TORCH_MODULE(ConvNet);

// One residual block: conv-BN-ReLU-conv-BN (+ squeeze-excitation), skip, ReLU.
struct ResidualBlockImpl : torch::nn::Module {
  ResidualBlockImpl(int channels, bool squeeze_excitation);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Linear se_reduce{nullptr}, se_expand{nullptr};
};
TORCH_MODULE(ResidualBlock);

// A residual tower with a move-type policy head: for each from-square, 64 logits, one per
// move type (8 directions x 7 distances + 8 knight jumps), shaped like the board; the 1792
// (from, type) pairs that land on the board are the possibly-legal move indices.
struct ResNetImpl : PolicyNet {
  explicit ResNetImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::nn::Conv2d stem{nullptr}, policy{nullptr};
  torch::nn::BatchNorm2d stem_bn{nullptr};
  torch::nn::Sequential tower{nullptr};
  IndexHead head{nullptr};
};
TORCH_MODULE(ResNet);

// One pre-norm transformer encoder layer over the 64 square tokens [B,64,d]:
// x + attention(LN(x)), then x + FFN(LN(x)) with a GELU.
struct EncoderLayerImpl : torch::nn::Module {
  EncoderLayerImpl(int width, int heads, int feed_forward);
  torch::Tensor forward(torch::Tensor x);
  int heads;
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, ff_in{nullptr}, ff_out{nullptr};
};
TORCH_MODULE(EncoderLayer);

// Attention over the 64 squares, as lc0's transformer nets: each square is a token (its input
// planes' values, embedded, plus a learned embedding of the square), so one layer relates any
// two squares however far apart, where a 3x3 convolution moves one square a layer; legality
// is about lines (sliders, pins, checks). The policy head scores every (from, to) pair as the
// scaled dot product of a query of `from` and a key of `to`, plus a learned bias per move
// index; the 2304 indices that are never a move are fixed off.
struct AttentionNetImpl : PolicyNet {
  explicit AttentionNetImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::nn::Linear embed{nullptr}, query{nullptr}, key{nullptr};
  torch::Tensor square_embedding, move_bias, impossible;
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(AttentionNet);

// Builds the network a (resolved) config describes.
std::shared_ptr<PolicyNet> make_model(const ModelConfig& config);

}  // namespace legalnet::nn
