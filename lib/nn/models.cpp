#include "nn/models.h"

#include "encode/encode.h"
#include "util/error.h"

namespace legalnet::nn {
namespace {

// Sigmoid(-20) = 2e-9: the fixed-off indices cost nothing in the loss and are never picked.
constexpr float FIXED_OFF_LOGIT = -20.0f;

constexpr int DIRECTIONS[8][2] = {{0, 1}, {1, 1}, {1, 0}, {1, -1}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}};
constexpr int KNIGHT_JUMPS[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};

// Indices of the geometric moves in order, so compact output j is move index geometric()[j].
const std::vector<int>& geometric_indices() {
  static const std::vector<int> v = [] {
    std::vector<int> out;
    for (int i = 0; i < encode::MOVE_INDICES; ++i)
      if (encode::index_is_geometric(i)) out.push_back(i);
    return out;
  }();
  return v;
}

IndexHead compact_head() {
  std::vector<int64_t> source(encode::MOVE_INDICES, int64_t(geometric_indices().size()));
  for (size_t j = 0; j < geometric_indices().size(); ++j) source[size_t(geometric_indices()[j])] = int64_t(j);
  return IndexHead(source);
}

int64_t final_width(const ModelConfig& c) {
  return c.geometric_head ? int64_t(geometric_indices().size()) : encode::MOVE_INDICES;
}

}  // namespace

int move_type_of(int index) {
  const int from = index / 64, to = index % 64;
  const int df = to % 8 - from % 8, dr = to / 8 - from / 8;
  for (int d = 0; d < 8; ++d)
    for (int k = 1; k <= 7; ++k)
      if (DIRECTIONS[d][0] * k == df && DIRECTIONS[d][1] * k == dr) return d * 7 + (k - 1);
  for (int j = 0; j < 8; ++j)
    if (KNIGHT_JUMPS[j][0] == df && KNIGHT_JUMPS[j][1] == dr) return 56 + j;
  return -1;
}

IndexHeadImpl::IndexHeadImpl(const std::vector<int64_t>& src) {
  source = register_buffer("source", torch::tensor(src, torch::kLong));
  fixed_off = register_buffer("fixed_off", torch::full({1, 1}, FIXED_OFF_LOGIT));
}

torch::Tensor IndexHeadImpl::forward(torch::Tensor compact) {
  const auto padded = torch::cat({compact, fixed_off.to(compact.dtype()).expand({compact.size(0), 1})}, 1);
  return padded.index_select(1, source);
}

MlpImpl::MlpImpl(const ModelConfig& c) {
  hidden = register_module("hidden", torch::nn::Linear(c.input_planes() * encode::PLANE_SIZE, c.hidden));
  out = register_module("out", torch::nn::Linear(c.hidden, final_width(c)));
  if (c.geometric_head) head = register_module("head", compact_head());
}

torch::Tensor MlpImpl::forward(torch::Tensor planes) {
  // planes [B,7,8,8] -> logits [B,4096]
  auto x = out(torch::relu(hidden(planes.flatten(1))));
  return head ? head(x) : x;
}

ConvNetImpl::ConvNetImpl(const ModelConfig& c) {
  tower = register_module("tower", torch::nn::Sequential());
  int in = c.input_planes();
  for (int b = 0; b < c.blocks; ++b) {
    tower->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, c.channels, /*kernel_size=*/3).padding(1)));
    tower->push_back(torch::nn::BatchNorm2d(c.channels));
    tower->push_back(torch::nn::ReLU());
    in = c.channels;
  }
  hidden = register_module("hidden", torch::nn::Linear(c.channels * 64, c.hidden));
  out = register_module("out", torch::nn::Linear(c.hidden, final_width(c)));
  if (c.geometric_head) head = register_module("head", compact_head());
}

torch::Tensor ConvNetImpl::forward(torch::Tensor planes) {
  // planes [B,7,8,8] -> tower [B,C,8,8] -> logits [B,4096]
  auto x = out(torch::relu(hidden(tower->forward(planes).flatten(1))));
  return head ? head(x) : x;
}

ResidualBlockImpl::ResidualBlockImpl(int channels, bool squeeze_excitation) {
  auto conv = [&] { return torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1).bias(false)); };
  conv1 = register_module("conv1", conv());
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(channels));
  conv2 = register_module("conv2", conv());
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(channels));
  if (squeeze_excitation) {
    se_reduce = register_module("se_reduce", torch::nn::Linear(channels, std::max(channels / 4, 4)));
    se_expand = register_module("se_expand", torch::nn::Linear(std::max(channels / 4, 4), channels));
  }
}

torch::Tensor ResidualBlockImpl::forward(torch::Tensor x) {
  auto y = bn2(conv2(torch::relu(bn1(conv1(x)))));
  if (se_reduce) {
    auto s = torch::sigmoid(se_expand(torch::relu(se_reduce(y.mean({2, 3})))));
    y = y * s.unsqueeze(2).unsqueeze(3);
  }
  return torch::relu(x + y);
}

ResNetImpl::ResNetImpl(const ModelConfig& c) {
  stem = register_module(
      "stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.input_planes(), c.channels, 3).padding(1).bias(false)));
  stem_bn = register_module("stem_bn", torch::nn::BatchNorm2d(c.channels));
  tower = register_module("tower", torch::nn::Sequential());
  for (int b = 0; b < c.blocks; ++b) tower->push_back(ResidualBlock(c.channels, c.squeeze_excitation));
  policy = register_module("policy", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.channels, 64, /*kernel_size=*/1)));
  // policy output [B, type, rank, file] flattens to type * 64 + from.
  std::vector<int64_t> source(encode::MOVE_INDICES, 64 * 64);
  for (int i = 0; i < encode::MOVE_INDICES; ++i)
    if (encode::index_is_geometric(i)) source[size_t(i)] = int64_t(move_type_of(i)) * 64 + i / 64;
  head = register_module("head", IndexHead(source));
}

torch::Tensor ResNetImpl::forward(torch::Tensor planes) {
  // planes [B,7,8,8] -> tower [B,C,8,8] -> policy [B,64,8,8] -> logits [B,4096]
  auto x = tower->forward(torch::relu(stem_bn(stem(planes))));
  return head(policy(x).flatten(1));
}

std::shared_ptr<PolicyNet> make_model(const ModelConfig& config) {
  const ModelConfig c = config.resolved();
  if (c.kind == "mlp") return Mlp(c).ptr();
  if (c.kind == "conv") return ConvNet(c).ptr();
  return ResNet(c).ptr();
}

}  // namespace legalnet::nn
