#include "nn/models.h"

#include <ATen/autocast_mode.h>

#include <cmath>
#include <numeric>

#include "chess/bitboard.h"
#include "compute/arithmetic.h"
#include "encode/attack_planes.h"
#include "encode/encode.h"
#include "kernels/kernels.h"
#include "util/error.h"

namespace legalnet::nn {
namespace {

// Indices of the geometric moves in order, so compact output j is move index geometric()[j].
const std::vector<int64_t>& geometric_indices() {
  static const std::vector<int64_t> v = [] {
    std::vector<int64_t> out;
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

// For each geometric move j (geometric_indices()[j]) the squares strictly between its two
// squares, squares[offsets[j] .. offsets[j + 1]): chess's between table less the square moved
// to (none for a knight's jump or a step).
struct BetweenLists {
  std::vector<int32_t> offsets{0}, squares;
};

BetweenLists between_lists() {
  chess::init_bitboards();
  BetweenLists lists;
  for (const int64_t move : geometric_indices()) {
    const auto from = chess::Square(move / 64), to = chess::Square(move % 64);
    for (chess::Bitboard way = chess::between_bb(from, to) & ~chess::square_bb(to); way;)
      lists.squares.push_back(int32_t(chess::pop_lsb(way)));
    lists.offsets.push_back(int32_t(lists.squares.size()));
  }
  return lists;
}

// [64,1792] float: column j holds a 1 at each square `lists` gives move j.
torch::Tensor between_squares(const BetweenLists& lists) {
  auto m = torch::zeros({64, int64_t(lists.offsets.size()) - 1});
  auto at = m.accessor<float, 2>();
  for (size_t j = 0; j + 1 < lists.offsets.size(); ++j)
    for (int32_t k = lists.offsets[j]; k < lists.offsets[j + 1]; ++k) at[lists.squares[size_t(k)]][int64_t(j)] = 1.0f;
  return m;
}

// The line of a geometric move for its vetoes: 0..3 the queen lines (file, diagonal, rank,
// antidiagonal: move_type_of's directions N, NE, E, SE and their opposites), 4 a knight's jump.
int veto_line(int64_t index) {
  const int type = encode::move_type_of(int(index));
  return type < 56 ? (type / 7) % 4 : VETO_LINES - 1;
}

// Where veto k of each geometric move reads its value (ResNetImpl::veto_from and veto_to): in
// the flattened [channel][square] output of the vetoes' convolution, the from-values' channels
// first; at k * 1792 + j for the move geometric_indices()[j].
std::vector<int64_t> veto_index(bool to_square) {
  const int vetoes = VETO_LINES * VETOES_PER_LINE;
  std::vector<int64_t> out;
  for (int k = 0; k < VETOES_PER_LINE; ++k)
    for (const int64_t i : geometric_indices()) {
      const int channel = (to_square ? vetoes : 0) + veto_line(i) * VETOES_PER_LINE + k;
      out.push_back(int64_t(channel) * 64 + (to_square ? i % 64 : i / 64));
    }
  return out;
}

int64_t final_width(const ModelConfig& c) {
  return c.geometric_head ? int64_t(geometric_indices().size()) : encode::MOVE_INDICES;
}

}  // namespace

DeviceIndex::DeviceIndex(const std::vector<int64_t>& values) : DeviceConstant(torch::tensor(values, torch::kLong)) {}

const torch::Tensor& DeviceConstant::on(const torch::Device& device) {
  if (device.is_cpu()) return cpu_;
  if (!on_device_.defined() || on_device_.device() != device) on_device_ = cpu_.to(device);
  return on_device_;
}

PolicyNet::PolicyNet() {
  std::vector<int64_t> all(encode::MOVE_INDICES);
  std::iota(all.begin(), all.end(), int64_t(0));
  trained_moves_ = DeviceIndex(all);
}

void PolicyNet::train_geometric_moves_only() { trained_moves_ = DeviceIndex(geometric_indices()); }

torch::Tensor PolicyNet::Gathered::trained() const {
  const auto first = scores.index_select(1, columns);
  return extra.defined() ? first + extra.index_select(1, extra_columns) : first;
}

PolicyNet::Gathered PolicyNet::forward_gathered(torch::Tensor planes) {
  auto logits = forward_trained(planes).contiguous();
  return {logits, torch::arange(logits.size(1), torch::TensorOptions(torch::kLong).device(logits.device()))};
}

void PolicyNet::use_channels_last() {
  torch::NoGradGuard no_grad;
  for (auto& p : parameters())
    if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
  channels_last_ = true;
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
  if (c.geometric_head) {
    head = register_module("head", compact_head());
    train_geometric_moves_only();
  }
}

torch::Tensor MlpImpl::forward_trained(torch::Tensor planes) {
  // planes [B,C,8,8] -> trained logits [B,1792 or 4096]
  return out(torch::relu(hidden(planes.flatten(1))));
}

torch::Tensor MlpImpl::forward(torch::Tensor planes) {
  auto x = forward_trained(planes);
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
  if (c.geometric_head) {
    head = register_module("head", compact_head());
    train_geometric_moves_only();
  }
}

torch::Tensor ConvNetImpl::forward_trained(torch::Tensor planes) {
  // planes [B,C,8,8] -> tower [B,channels,8,8] -> trained logits [B,1792 or 4096]
  return out(torch::relu(hidden(tower->forward(planes).flatten(1))));
}

torch::Tensor ConvNetImpl::forward(torch::Tensor planes) {
  auto x = forward_trained(planes);
  return head ? head(x) : x;
}

namespace {

// A 3x3 convolution (padding 1, no bias) by the kernels asked for; the board kernels take
// what they can (CPU, 8x8; fp32 all of it, bf16 the weight gradient) and leave the rest to torch.
torch::Tensor conv3x3(torch::nn::Conv2d& conv, const torch::Tensor& x, Kernels kernels) {
  if (kernels != Kernels::BOARD) return conv(x);
  if (board_conv_applies(x, conv->weight)) return board_conv3x3(x, conv->weight);
  if (board_conv_bf16_applies(x, conv->weight)) return board_conv3x3_bf16(x, conv->weight);
  return conv(x);
}

// relu(norm(x) + residual) (residual may be undefined): one node of the board kernels where
// they apply (a CPU in fp32: training, or inference without gradients), torch's norm, add and
// relu otherwise.
torch::Tensor norm_relu(torch::nn::BatchNorm2d& norm, const torch::Tensor& x, Kernels kernels,
                        const torch::Tensor& residual = {}) {
  if (kernels == Kernels::BOARD && board_norm_applies(x, *norm)) return board_norm_relu(x, *norm, residual);
  const auto y = norm(x);
  return torch::relu(residual.defined() ? residual + y : y);
}

}  // namespace

ResidualBlockImpl::ResidualBlockImpl(int channels, bool squeeze_excitation, Mixing mixing) {
  auto conv = [&] { return torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, channels, 3).padding(1).bias(false)); };
  conv1 = register_module("conv1", conv());
  bn1 = register_module("bn1", torch::nn::BatchNorm2d(channels));
  conv2 = register_module("conv2", conv());
  bn2 = register_module("bn2", torch::nn::BatchNorm2d(channels));
  if (squeeze_excitation) {
    se_reduce = register_module("se_reduce", torch::nn::Linear(channels, std::max(channels / 4, 4)));
    se_expand = register_module("se_expand", torch::nn::Linear(std::max(channels / 4, 4), channels));
  }
  if (mixing == Mixing::LINES) lines = register_module("lines", LineMixing(channels));
  if (mixing == Mixing::RAYS) rays = register_module("rays", RayScan(channels));
}

torch::Tensor ResidualBlockImpl::forward(torch::Tensor x) {
  auto h = norm_relu(bn1, conv3x3(conv1, x, kernels), kernels);
  if (lines) h = lines(h);
  if (rays) h = rays(h, kernels);
  if (!se_reduce) return norm_relu(bn2, conv3x3(conv2, h, kernels), kernels, x);
  const auto y = bn2(conv3x3(conv2, h, kernels));
  const auto s = torch::sigmoid(se_expand(torch::relu(se_reduce(y.mean({2, 3})))));
  return torch::relu(x + y * s.unsqueeze(2).unsqueeze(3));
}

ResNetImpl::ResNetImpl(const ModelConfig& c) {
  stem = register_module(
      "stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.input_planes(), c.channels, 3).padding(1).bias(false)));
  stem_bn = register_module("stem_bn", torch::nn::BatchNorm2d(c.channels));
  tower = register_module("tower", torch::nn::Sequential());
  for (int b = 0; b < c.blocks; ++b) tower->push_back(ResidualBlock(c.channels, c.squeeze_excitation, c.mixing));
  policy = register_module("policy", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.channels, 64, /*kernel_size=*/1)));
  // policy output [B, type, rank, file] flattens to type * 64 + from.
  std::vector<int64_t> source(encode::MOVE_INDICES, 64 * 64), type_major, square_major;
  for (const int64_t i : geometric_indices()) {
    const int64_t type = int64_t(encode::move_type_of(int(i))), from = i / 64;
    source[size_t(i)] = type * 64 + from;
    type_major.push_back(type * 64 + from);
    square_major.push_back(from * 64 + type);
  }
  head = register_module("head", IndexHead(source));
  by_type = DeviceIndex(type_major);
  by_square = DeviceIndex(square_major);
  if (c.policy_head == PolicyHead::PAIRS)
    pairs = register_module("pairs",
                            torch::nn::Conv2d(torch::nn::Conv2dOptions(c.channels, 2 * c.channels, 1).bias(false)));
  if (c.rules_head)
    rules = register_module("rules", torch::nn::Conv2d(c.channels, encode::rule_target_planes(c.rule_targets()), 1));
  // board_logits' tables, filled beside the heads' own (without the paths, no move's list of squares).
  auto tables = std::make_shared<MoveLogitTables>();
  tables->moves = geometric_indices();
  tables->between_offsets.assign(tables->moves.size() + 1, 0);
  tables->off_logit = FIXED_OFF_LOGIT;
  if (c.paths) {
    paths = register_module("paths", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.channels, 1, 1)));
    // Starts near no cost (softplus(-4) = 0.018 a square): at first a long move is scored as the
    // other heads score it, and the net learns which squares block.
    torch::NoGradGuard no_grad;
    paths->bias.fill_(-4.0);
    BetweenLists lists = between_lists();
    between = DeviceConstant(between_squares(lists));
    tables->between_offsets = std::move(lists.offsets);
    tables->between_squares = std::move(lists.squares);
  }
  if (c.vetoes) {
    vetoes = register_module(
        "vetoes", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.channels, 2 * VETO_LINES * VETOES_PER_LINE, 1)));
    // Starts near no veto (softplus(-2 - 2) = 0.018 each), as the paths do.
    torch::NoGradGuard no_grad;
    vetoes->bias.fill_(-2.0);
    tables->veto_from = veto_index(false);
    tables->veto_to = veto_index(true);
    veto_from = DeviceIndex(tables->veto_from);
    veto_to = DeviceIndex(tables->veto_to);
  }
  if (c.input_skip) {
    input_skip = register_module(
        "input_skip", torch::nn::Conv2d(torch::nn::Conv2dOptions(c.input_planes(), c.channels, 1).bias(false)));
    // Starts at nothing added: the net begins as the one without the skip and learns what to read.
    torch::NoGradGuard no_grad;
    input_skip->weight.zero_();
  }
  train_geometric_moves_only();
  logit_tables = std::move(tables);
}

torch::Tensor ResNetImpl::policy_planes(torch::Tensor planes) {
  // planes [B,C,8,8] -> tower [B,channels,8,8] -> policy [B,64,8,8]
  return policy(tower_forward(planes));
}

torch::Tensor ResNetImpl::tower_forward(torch::Tensor planes) {
  const auto out = tower->forward(stem_forward(planes));
  return input_skip ? out + input_skip(planes) : out;
}

torch::Tensor ResNetImpl::stem_forward(torch::Tensor planes) {
  return norm_relu(stem_bn, conv3x3(stem, planes, kernels), kernels);
}

void ResNetImpl::use_kernels(Kernels k) {
  // auto as it resolves on a CPU in fp32: the board kernels take only what they can anyway
  // (board_conv_applies, board_conv_bf16_applies), and leave CUDA to torch.
  k = resolve_kernels(k, torch::kCPU, Precision::FP32);
  kernels = k;
  for (auto& block : tower->children()) block->as<ResidualBlockImpl>()->kernels = k;
}

torch::Tensor ResNetImpl::forward(torch::Tensor planes) {
  if (!pairs && !paths && !vetoes) return head(policy_planes(planes).flatten(1));
  const auto tower_out = tower_forward(planes);
  if (kernels == Kernels::BOARD && !torch::GradMode::is_enabled() && tower_out.device().is_cpu() &&
      tower_out.scalar_type() == torch::kFloat && !at::autocast::is_autocast_enabled(torch::kCPU))
    return board_logits(tower_out);
  const auto trained = head_forward(tower_out).trained();
  return torch::full({trained.size(0), encode::MOVE_INDICES}, FIXED_OFF_LOGIT, trained.options())
      .index_copy(1, trained_moves(trained.device()), trained);
}

torch::Tensor ResNetImpl::board_logits(const torch::Tensor& tower_out) {
  const int64_t batch = tower_out.size(0);
  const Gathered g = gather_policy(policy(tower_out));
  MoveLogitParts parts{.scores = g.scores, .columns = g.columns};
  if (pairs) parts.pairs = pair_scores(tower_out);
  if (paths) parts.path_values = paths(tower_out).reshape({batch, 64}).contiguous();
  if (vetoes) parts.veto_values = vetoes(tower_out).reshape({batch, -1}).contiguous();
  return board_move_logits(parts, *logit_tables);
}

torch::Tensor ResNetImpl::pair_scores(const torch::Tensor& tower_out) {
  // [B,2d,8,8] -> squares [B,64,2d] (a view in channels-last) -> query, key [B,64,d] -> [B,64,64]
  const int64_t batch = tower_out.size(0), width = tower_out.size(1);
  const auto squares = pairs(tower_out).permute({0, 2, 3, 1}).reshape({batch, 64, 2 * width});
  if (kernels == Kernels::BOARD && board_pair_scores_applies(squares)) return board_pair_scores(squares);
  const auto query = squares.narrow(2, 0, width), key = squares.narrow(2, width, width);
  return (torch::matmul(query, key.transpose(1, 2)) / std::sqrt(double(width))).reshape({batch, 64 * 64});
}

torch::Tensor ResNetImpl::path_costs(const torch::Tensor& tower_out) {
  const auto blocking = torch::softplus(paths(tower_out)).reshape({tower_out.size(0), 64});
  return torch::mm(blocking, between.on(tower_out.device()).to(blocking.scalar_type()));
}

torch::Tensor ResNetImpl::veto_costs(const torch::Tensor& tower_out) {
  const int64_t batch = tower_out.size(0);
  const auto values = vetoes(tower_out).reshape({batch, -1});
  const auto& device = tower_out.device();
  const auto both = values.index_select(1, veto_from.on(device)) + values.index_select(1, veto_to.on(device));
  return torch::softplus(both).view({batch, VETOES_PER_LINE, -1}).sum(1);
}

torch::Tensor ResNetImpl::move_costs(const torch::Tensor& tower_out) {
  torch::Tensor costs;
  if (paths) costs = path_costs(tower_out);
  if (vetoes) costs = costs.defined() ? costs + veto_costs(tower_out) : veto_costs(tower_out);
  if (!costs.defined()) return costs;
  // Into the 4096 move indices by index_copy, whose gradient is a gather (index_select's would
  // be a scatter-add).
  return torch::zeros({costs.size(0), encode::MOVE_INDICES}, costs.options())
      .index_copy(1, trained_moves(tower_out.device()), costs);
}

torch::Tensor ResNetImpl::forward_trained(torch::Tensor planes) { return forward_gathered(planes).trained(); }

PolicyNet::Gathered ResNetImpl::forward_gathered(torch::Tensor planes) { return head_forward(tower_forward(planes)); }

PolicyNet::Gathered ResNetImpl::head_forward(const torch::Tensor& tower_out) {
  Gathered g = gather_policy(policy(tower_out));
  if (pairs) g.extra = pair_scores(tower_out);
  if (paths || vetoes) g.extra = g.extra.defined() ? g.extra - move_costs(tower_out) : -move_costs(tower_out);
  if (g.extra.defined()) g.extra_columns = trained_moves(tower_out.device());
  if (rules && is_training()) g.rules = rules(tower_out);
  return g;
}

PolicyNet::Gathered ResNetImpl::gather_policy(const torch::Tensor& p) {
  const int64_t batch = p.size(0);
  if (!p.is_contiguous() && p.is_contiguous(torch::MemoryFormat::ChannelsLast))
    return {p.permute({0, 2, 3, 1}).reshape({batch, 64 * 64}), by_square.on(p.device())};
  return {p.reshape({batch, 64 * 64}), by_type.on(p.device())};
}

// The factories of MODEL_SPECS (nn/model_config.cpp).
std::shared_ptr<PolicyNet> make_mlp(const ModelConfig& c) { return Mlp(c).ptr(); }
std::shared_ptr<PolicyNet> make_conv(const ModelConfig& c) { return ConvNet(c).ptr(); }
std::shared_ptr<PolicyNet> make_resnet(const ModelConfig& c) { return ResNet(c).ptr(); }

std::shared_ptr<PolicyNet> make_model(const ModelConfig& config) {
  const ModelConfig c = config.resolved();
  return model_spec(c.kind).make(c);
}

}  // namespace legalnet::nn
