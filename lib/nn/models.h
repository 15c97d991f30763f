// The networks: libtorch modules mapping input planes [B,C,8,8] (C from the input kind,
// encode/inputs.h) to move logits [B,4096] in the input's frame.
#pragma once

#include <torch/torch.h>

#include <array>

#include "compute/choices.h"
#include "nn/model_config.h"

namespace legalnet::nn {

struct MoveLogitTables;  // kernels/kernels.h

// The logit of a move index a model never predicts (it is never a move: no queen or knight
// line joins its squares): sigmoid(-20) = 2e-9, so it costs nothing in the loss and is never picked.
constexpr float FIXED_OFF_LOGIT = -20.0f;

// A fixed tensor a net derives from its config, copied once to the device it is asked for (not
// a buffer: the model files hold no such tensor).
class DeviceConstant {
 public:
  explicit DeviceConstant(torch::Tensor cpu = {}) : cpu_(std::move(cpu)) {}
  const torch::Tensor& on(const torch::Device& device);

 private:
  torch::Tensor cpu_, on_device_;
};

// Indices of a fixed int64 list.
class DeviceIndex : public DeviceConstant {
 public:
  explicit DeviceIndex(const std::vector<int64_t>& values = {});
};

// What every model is: planes in (float [B,C,8,8]), one logit per move index out.
class PolicyNet : public torch::nn::Module {
 public:
  PolicyNet();
  // Logits of the 4096 move indices [B,4096].
  virtual torch::Tensor forward(torch::Tensor planes) = 0;
  // Only the logits the model computes and trains, [B,K]: column j is move index
  // trained_moves()[j]; forward() is them with FIXED_OFF_LOGIT at the other 4096 - K indices.
  // Training scores these alone (nn/loss.h): with K = 1792 the loss does 2.3x less work and
  // skips the scatter into 4096 columns and its backward.
  virtual torch::Tensor forward_trained(torch::Tensor planes) { return forward(planes); }
  // The trained logits where the forward pass leaves them: forward_trained(planes) is
  // scores.index_select(1, columns), scores [B,N] contiguous in the pass's dtype, columns
  // int64 [K]. The training loss reads them in place (nn/loss.h: no gather, cast or scatter).
  // Default: the trained logits themselves, columns 0..K-1. A net with two heads adds a second
  // source (the resnet's pairs head, less the paths' and the vetoes' costs; those alone without
  // the pairs head): logit j is scores[:, columns[j]] + extra[:, extra_columns[j]],
  // summed by the loss where it reads them (no gather, add or scatter of their own).
  struct Gathered {
    torch::Tensor scores, columns;
    torch::Tensor extra = {}, extra_columns = {};  // undefined for one source
    // A resnet with the rules head, in training: its logits of the P rule planes [B,P,8,8]
    // (ModelConfig::rule_targets, in the inputs' frame); undefined otherwise.
    torch::Tensor rules = {};
    // The trained logits [B,K] composed by torch's ops (evaluation, CUDA, tests).
    torch::Tensor trained() const;
  };
  virtual Gathered forward_gathered(torch::Tensor planes);
  // The move index of each trained logit (int64 [K], on `device`): the geometric moves in
  // order, or all 4096 for a model with a full-width head.
  const torch::Tensor& trained_moves(const torch::Device& device) { return trained_moves_.on(device); }
  // Keeps 4-d weights (convolutions) in channels-last layout and asks forward_logits
  // (precision.h) for inputs in that layout: oneDNN's convolutions run faster on it.
  void use_channels_last();
  bool channels_last() const { return channels_last_; }
  // Who runs the 3x3 convolutions over the board (compute/choices.h; auto resolved by
  // nn::resolve_kernels); the weights and the model file are the same either way. Nets without
  // such convolutions ignore it.
  virtual void use_kernels(Kernels) {}

 protected:
  // For a model whose trained logits are the geometric moves (the default is all 4096).
  void train_geometric_moves_only();

 private:
  bool channels_last_ = false;
  DeviceIndex trained_moves_;
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

// The predecessor's first net: flatten input_planes() * 64 (1152 for the 18 state planes) -> hidden
// -> ReLU -> 4096 (or the 1792 possible).
struct MlpImpl : PolicyNet {
  explicit MlpImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::Tensor forward_trained(torch::Tensor planes) override;
  torch::nn::Linear hidden{nullptr}, out{nullptr};
  IndexHead head{nullptr};
};
TORCH_MODULE(Mlp);

// The predecessor's best family: blocks of Conv3x3 -> BatchNorm -> ReLU, then FC -> 4096.
struct ConvNetImpl : PolicyNet {
  explicit ConvNetImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::Tensor forward_trained(torch::Tensor planes) override;
  torch::nn::Sequential tower{nullptr};
  torch::nn::Linear hidden{nullptr}, out{nullptr};
  IndexHead head{nullptr};
};
TORCH_MODULE(ConvNet);

// Mixes every channel along the four lines through each square (its rank, its file, both
// diagonals) in one layer: checks, pins and blocked slider moves relate squares a board apart,
// which a stack of 3x3 convolutions reaches only one square per layer. out = x + L(x), where
// square i of channel c gains weight[c, tap] * x[c, j] for each square j != i on a line
// through i; the tap is the line's direction (4) and the signed distance to j (-7..7 but 0):
// 56 weights per channel, none of them told anything about the pieces or the rules. The taps
// are spread into one [64,64] matrix per channel through a fixed table (4096 indices) and applied
// as one batched matmul, in bf16 channels-last about 1.3x the time of a 3x3 convolution of the
// same width; a masked 15x15 depthwise convolution takes 25x, a gather of the 56 squares 55x
// (docs/benchmarks.md, issue 24).
struct LineMixingImpl : torch::nn::Module {
  static constexpr int TAPS = 4 * 14;
  explicit LineMixingImpl(int channels);
  torch::Tensor forward(torch::Tensor x);  // [B,C,8,8] -> [B,C,8,8]
  // The channels' [C,64,64] matrices: row i, column j is the weight square j gives square i.
  torch::Tensor matrices();
  torch::Tensor weight;  // [C, TAPS]
  DeviceIndex tap_of;    // at i * 64 + j: the tap joining squares i and j, or TAPS (not on a line)
};
TORCH_MODULE(LineMixing);

// Rays: a slider moves until the first piece in its way, a check or a pin runs along a line up to
// a blocker; line mixing (above) sees a whole line at once but cannot tell what stands between.
// A ray scan carries features along each of the 8 directions square by square, each square
// passing on what reaches it times a gate it computes: out = x + W_out h, where per square a
// linear map of x gives R values v and R gates g = sigmoid(.), and h[s][d] = v[s-d] + g[s-d] *
// h[s-d][d] along direction d (kernels.h: board_ray_layer; RAY_DIRECTIONS). With v = 1 and g =
// "the square is empty", h counts the empty squares before the first blocker: the net learns
// its v and g, told nothing of pieces or rules. R = ray_scan_width(channels).
struct RayScanImpl : torch::nn::Module {
  explicit RayScanImpl(int channels);
  // x [B,C,8,8] -> [B,C,8,8]: the board kernels' layer where kernels is BOARD and it applies,
  // torch's ops (the scan's sums in log2(8) doubling steps of gathers) otherwise.
  torch::Tensor forward(torch::Tensor x, Kernels kernels = Kernels::TORCH);
  // values, gates [B,64,R] -> h [B,64,8,R] with torch's ops (CUDA, --kernels torch, the tests'
  // reference).
  torch::Tensor scan_torch(const torch::Tensor& values, const torch::Tensor& gates);
  int64_t rays;
  torch::nn::Linear project{nullptr}, out{nullptr};  // x -> values and gates; h -> x's channels
  // Gathers over a board padded with a zero square 64: the first step's, from [64+1] squares to
  // [8 directions][64+1]; then the doubling steps' (1, 2, 4 squares back) within each direction.
  DeviceIndex first_step;
  std::array<DeviceIndex, 3> doubling;
};
TORCH_MODULE(RayScan);

// One residual block: conv-BN-ReLU (-line mixing or ray scan) -conv-BN (+ squeeze-excitation),
// skip, ReLU.
struct ResidualBlockImpl : torch::nn::Module {
  ResidualBlockImpl(int channels, bool squeeze_excitation, Mixing mixing = Mixing::NONE);
  torch::Tensor forward(torch::Tensor x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  Kernels kernels = Kernels::TORCH;
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Linear se_reduce{nullptr}, se_expand{nullptr};
  LineMixing lines{nullptr};
  RayScan rays{nullptr};
};
TORCH_MODULE(ResidualBlock);

// A residual tower with a move-type policy head: for each from-square, 64 logits, one per
// move type (8 directions x 7 distances + 8 knight jumps), shaped like the board; the 1792
// (from, type) pairs that land on the board are the possibly-legal move indices. The "pairs"
// head (ModelConfig::policy_head) adds to each the scaled dot product of a query of the
// from-square and a key of the to-square (lc0's attention policy, without the attention):
// a king's step is legal where its to-square is not attacked, a move in check where its
// to-square blocks or captures, both facts of the to-square that the move-type head can only
// see after the tower carries them to the from-square.
struct ResNetImpl : PolicyNet {
  explicit ResNetImpl(const ModelConfig& c);
  torch::Tensor forward(torch::Tensor planes) override;
  torch::Tensor forward_trained(torch::Tensor planes) override;
  Gathered forward_gathered(torch::Tensor planes) override;
  // The trained logits within the policy planes.
  Gathered gather_policy(const torch::Tensor& policy_planes);
  // The policy planes [B,64 move types,8,8] (in the layout of the weights).
  torch::Tensor policy_planes(torch::Tensor planes);
  // The stem and the residual tower, plus the input skip where the net has one: [B,channels,8,8].
  torch::Tensor tower_forward(torch::Tensor planes);
  // The policy head on the tower's output: the move-type logits, plus as the second source the
  // pairs head's scores less move_costs, where the net has either (forward_gathered after the
  // tower).
  Gathered head_forward(const torch::Tensor& tower_out);
  // The pairs head's (from, to) scores [B,4096] at move index from * 64 + to, from the tower's
  // output [B,channels,8,8].
  torch::Tensor pair_scores(const torch::Tensor& tower_out);
  // ModelConfig::paths: what blocks each geometric move's way [B,1792] (in trained_moves' order),
  // the sum of softplus(paths(tower_out)) over the squares strictly between its from- and
  // to-square.
  torch::Tensor path_costs(const torch::Tensor& tower_out);
  // ModelConfig::vetoes: [B,1792] (in trained_moves' order), the sum over the vetoes of each
  // geometric move's line of softplus(its from-square's value + its to-square's value), both of
  // vetoes(tower_out).
  torch::Tensor veto_costs(const torch::Tensor& tower_out);
  // The paths' and the vetoes' costs [B,4096] at move index from * 64 + to (0 at the indices that
  // are never a move), which the head subtracts from the logits; undefined without either.
  torch::Tensor move_costs(const torch::Tensor& tower_out);
  // The stem: its convolution, norm and ReLU [B,channels,8,8].
  torch::Tensor stem_forward(torch::Tensor planes);
  // forward()'s logits [B,4096] from the tower's output by the board kernels' one pass a board
  // (kernels::board_move_logits): inference on a CPU in fp32 (no gradient, no autocast), where
  // torch's ops would make a dozen passes over the batch.
  torch::Tensor board_logits(const torch::Tensor& tower_out);
  void use_kernels(Kernels kernels) override;
  torch::nn::Conv2d stem{nullptr}, policy{nullptr};
  torch::nn::Conv2d pairs{nullptr};  // the pairs head: channels -> query and key (channels each)
  torch::nn::Conv2d rules{nullptr};  // ModelConfig::rules_head: channels -> its rule_targets' planes
  torch::nn::Conv2d paths{nullptr};  // ModelConfig::paths: channels -> a blocking value per square
  // ModelConfig::vetoes: channels -> a from-value per veto (VETO_LINES x VETOES_PER_LINE), then a
  // to-value per veto.
  torch::nn::Conv2d vetoes{nullptr};
  torch::nn::Conv2d input_skip{nullptr};  // ModelConfig::input_skip: input planes -> channels, no bias
  Kernels kernels = Kernels::TORCH;
  torch::nn::BatchNorm2d stem_bn{nullptr};
  torch::nn::Sequential tower{nullptr};
  IndexHead head{nullptr};
  // Where each geometric move's logit lies in the flattened policy planes: at type * 64 + from
  // in the default layout, at from * 64 + type in channels-last (read without a copy).
  DeviceIndex by_type, by_square;
  // [64,1792]: 1 where square s lies strictly between the squares of geometric move j.
  DeviceConstant between;
  // [VETOES_PER_LINE * 1792]: where veto k of geometric move j reads its from-square's value and
  // its to-square's value in the flattened vetoes(tower_out) [B, 2 * VETO_LINES * VETOES_PER_LINE
  // * 64], at k * 1792 + j.
  DeviceIndex veto_from, veto_to;
  // The tables board_logits reads: the same moves, between squares and vetoes as above.
  std::shared_ptr<const MoveLogitTables> logit_tables;
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
  torch::Tensor forward_trained(torch::Tensor planes) override;
  Gathered forward_gathered(torch::Tensor planes) override;
  // The (from, to) scores plus the move bias, [B,4096], before the impossible ones are fixed off.
  torch::Tensor move_scores(torch::Tensor planes);
  torch::nn::Linear embed{nullptr}, query{nullptr}, key{nullptr};
  torch::Tensor square_embedding, move_bias, impossible;
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(AttentionNet);

// Builds the network a (resolved) config describes.
std::shared_ptr<PolicyNet> make_model(const ModelConfig& config);

}  // namespace legalnet::nn
