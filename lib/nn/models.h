// The networks: libtorch modules mapping planes [B,7,8,8] to move logits [B,4096].
#pragma once

#include <torch/torch.h>

#include "nn/model_config.h"

namespace legalnet::nn {

// What every model is: planes in (float [B,7,8,8]), one logit per move index out.
class PolicyNet : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor planes) = 0;
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

// Builds the network a (resolved) config describes.
std::shared_ptr<PolicyNet> make_model(const ModelConfig& config);

// Move type (0..63) of a geometric move index, or -1 (see ResNetImpl).
int move_type_of(int index);

}  // namespace legalnet::nn
