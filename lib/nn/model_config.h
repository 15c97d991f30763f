// A model's architecture and sizes: saved beside the weights so that a model file alone
// rebuilds its network. No torch here, so tools and tests can read it cheaply.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "encode/inputs.h"
#include "util/choices.h"

namespace legalnet::nn {

class PolicyNet;
struct ModelConfig;

enum class ModelKind { MLP, CONV, RESNET, ATTENTION };

// The sizes a net has. As options, 0 means "the kind's default".
struct ModelSizes {
  int hidden = 0, blocks = 0, channels = 0, heads = 0;
};

// What each size is in a kind's net, for train's --help ("hidden width"); nullptr where the kind
// has no such size. A size whose default is 0 says its rule here ("feed-forward width (2 x
// channels)").
struct SizeMeanings {
  const char *hidden = nullptr, *blocks = nullptr, *channels = nullptr, *heads = nullptr;
};

// The largest sizes, read by train's command line and by ModelConfig::resolved() (and
// python/legalnet/model_file.py's _LIMITS).
constexpr ModelSizes MAX_SIZES{.hidden = 65536, .blocks = 256, .channels = 4096, .heads = 64};

// resnet: "lines" mixes each block's features along the rank, file and both diagonals of every
// square (LineMixing in nn/models.h), so one block carries a line across the board; "rays" carries
// them along each of the 8 directions through gates each square learns (RayScan), so a line can
// stop at a blocker; "none" (the default, and files written before the option) is the plain 3x3
// block.
enum class Mixing { NONE, LINES, RAYS };
// A ray scan's width R: its values and gates per square (channels / 4; 8 directions each, so
// 2 x channels features a square reach its output map).
inline int ray_scan_width(int channels) { return channels / 4 > 1 ? channels / 4 : 1; }
// ModelConfig::vetoes: the lines a move can take, in the order of the vetoes' channels: 0 the file,
// 1 the diagonal (both coordinates rising together), 2 the rank, 3 the antidiagonal, 4 a knight's
// jump (a "line" here only in name); and the vetoes of each, each a value of the from-square and
// one of the to-square.
constexpr int VETO_LINES = 5;
constexpr int VETOES_PER_LINE = 2;
// The share of the resnet's rate a net with ray scans takes where --lr is left out: at the
// default's peak rate a 6x32 net with rays blew up twice; at half of it 6x32 and 5x32 nets trained
// cleanly, two seeds each (docs/benchmarks.md#log-2026-12-06-rays, #log-2026-12-06-rays-budget).
inline constexpr double RAYS_LR_SHARE = 0.5;
inline constexpr double lr_share(Mixing mixing) { return mixing == Mixing::RAYS ? RAYS_LR_SHARE : 1.0; }
// train --mixing, the model file's "mixing".
inline constexpr std::array<Choice<Mixing>, 3> MIXINGS{
    {{Mixing::NONE, "none"}, {Mixing::LINES, "lines"}, {Mixing::RAYS, "rays"}}};

// resnet: "types" (the default, and files written before the option) scores a move from its
// from-square alone, one 1x1-convolution channel per move type; "pairs" adds the scaled dot
// product of a query of the from-square and a key of the to-square (ResNetImpl), so what stands
// on, or attacks, the to-square reaches the move's logit without crossing the board. AUTO is
// train's --policy-head auto (the architecture's, ModelSpec::policy_head), never a model's.
enum class PolicyHead { AUTO, TYPES, PAIRS };
// train --policy-head, the model file's "policy_head".
inline constexpr std::array<Choice<PolicyHead>, 3> POLICY_HEADS{
    {{PolicyHead::AUTO, "auto"}, {PolicyHead::TYPES, "types"}, {PolicyHead::PAIRS, "pairs"}}};

// One row per model kind: what the command line, the model files, the FLOP and weight counts
// and the factory know about it. A new kind is a row here and its module in nn/models.h.
struct ModelSpec {
  ModelKind value;
  const char* name;         // train --arch, the model file's "kind"
  const char* description;  // for --help and docs
  ModelSizes defaults;      // for sizes left 0 (attention's hidden: 2 x channels, below)
  SizeMeanings sizes;       // what each size is, for --help (train's --hidden, --blocks, ...)
  bool uses_blocks;         // needs blocks and channels >= 1
  // Floating-point operations of one forward pass for one position (resolved config).
  double (*forward_flops)(const ModelConfig&);
  // A lower bound on the weights: convolutions and matrices, without biases and norms.
  int64_t (*min_parameters)(const ModelConfig&);
  // "mlp 4096", "conv 8x128 fc 1024", "resnet 6x32 se lines", "attention 6x64 h4 ff128"
  std::string (*describe)(const ModelConfig&);
  // The net (nn/models.cpp).
  std::shared_ptr<PolicyNet> (*make)(const ModelConfig&);
  // Its 3x3 convolutions can run on the board kernels (compute/arithmetic.h, resolve_arithmetic).
  bool board_convolutions = false;
  // What train takes for the options left out (run/train/schedule.h, default_lr):
  // - lr, the peak learning rate (--lr 0) for a schedule of lr_steps or more (0: any length); the
  //   resnet's was measured at 25,000 steps (1e-2 against 2e-3 to 3.2e-2: docs/benchmarks.md), the
  //   others keep the 2e-3 they were run with, not tuned; shorter schedules take higher rates;
  // - policy_head, --policy-head auto's: the resnet's pairs head (docs/benchmarks.md: more exact
  //   sets on the placements at the same steps); the other kinds have one head.
  double lr = 2e-3;
  int64_t lr_steps = 0;
  PolicyHead policy_head = PolicyHead::TYPES;
};

extern const std::array<ModelSpec, 4> MODEL_SPECS;
// What one size is in each kind's net, with its default, for train's --help: "conv/resnet: blocks
// (8 / 6); attention: layers (6)" (kinds in a row that mean the same by it joined).
std::string size_help(const char* SizeMeanings::*meaning, int ModelSizes::*size);
const ModelSpec& model_spec(ModelKind kind);
// Throws legalnet::Error "unknown model 'x' (expected mlp | conv | resnet | attention)".
ModelKind parse_model_kind(std::string_view name);

// The most weights a net may have (4 GiB in fp32): the largest sizes the options admit
// multiply to far more (a resnet 256x4096 has 77 G).
constexpr int64_t MAX_PARAMETERS = int64_t(1) << 30;

struct ModelConfig {
  ModelKind kind = ModelKind::RESNET;          // MODEL_SPECS
  int hidden = 0;                              // mlp: hidden width (default 4096); conv: FC width (default 1024);
                                               // attention: feed-forward width (default 2 x channels)
  int blocks = 0;                              // conv / resnet: number of blocks; attention: encoder layers
  int channels = 0;                            // conv / resnet: filters per block; attention: width of a square's token
  int heads = 0;                               // attention: heads per layer (default 4)
  bool squeeze_excitation = false;             // resnet: SE in every block
  Mixing mixing = Mixing::NONE;                // resnet: MIXINGS
  PolicyHead policy_head = PolicyHead::TYPES;  // resnet: POLICY_HEADS (never AUTO once resolved)
  // resnet: a 1x1 head on the tower that predicts the 3 rule planes of encode/attack_planes.h
  // (attacked squares, pins, check lines) from the position alone, trained by train's
  // --rules-weight; no prediction reads it (the net's inputs stay the position).
  bool rules_head = false;
  // With the rules head: its targets are encode/attack_planes.h's RULE_LINE_PLANES (each pin by
  // its line, the check rule as a fact of every square: what the vetoes need) instead of the 3
  // attack planes (train --rule-lines).
  bool rule_lines = false;
  // resnet: each move's logit less what blocks the squares strictly between its from- and
  // to-square: a softplus of a 1x1 convolution of the tower per square, summed along the move
  // (ResNetImpl::path_costs). Every move with such squares (a slider's, a pawn's double step,
  // castling) needs them empty; what the net learns is which squares block.
  bool paths = false;
  // resnet: each move's logit less, for each of VETOES_PER_LINE vetoes of the move's line (file,
  // diagonal, rank, antidiagonal or knight jump: VETO_LINES), a softplus of a value of its
  // from-square plus a value of its to-square (ResNetImpl::veto_costs): a fact of the one square
  // and a fact of the other that together forbid moves along that line, as a pinned piece leaving
  // its pin's line or a pawn pushed onto a piece; the pairs head has one product per pair of
  // squares and no term per line.
  bool vetoes = false;
  // resnet: the tower's output plus a 1x1 convolution of the input planes (no bias), which every
  // head reads (ResNetImpl::tower_forward): what stands on a square, a piece of either side or
  // none, reaches the paths' blocking values, the vetoes and the pairs as a plain linear fact,
  // whatever the tower makes of a position it seldom saw (train --input-skip).
  bool input_skip = false;
  // mlp / conv: a final layer of the 1792 possibly-legal outputs only, the other 2304 fixed off
  // (resnet always does this through its move-type head).
  bool geometric_head = true;
  // What the network sees (encode/inputs.h); the same default as train's --inputs. Model
  // files written before the input kinds existed hold none: from_json reads them as the
  // predecessor's planes.
  encode::InputKind inputs = encode::InputKind::STATE;
  const char* kind_name() const { return model_spec(kind).name; }
  int input_planes() const { return encode::input_spec(inputs).planes; }
  const char* inputs_name() const { return encode::input_spec(inputs).name; }
  const char* mixing_name() const { return choice_of(MIXINGS, mixing).name; }
  const char* policy_head_name() const { return choice_of(POLICY_HEADS, policy_head).name; }
  encode::RuleTargets rule_targets() const {
    return !rules_head  ? encode::RuleTargets::NONE
           : rule_lines ? encode::RuleTargets::LINES
                        : encode::RuleTargets::ATTACK_PLANES;
  }

  // Fills unset sizes with the kind's defaults; throws legalnet::Error for an unknown kind or
  // impossible sizes.
  ModelConfig resolved() const;
  std::string to_json() const;
  static ModelConfig from_json(const std::string& json);
  // Floating-point operations of one forward pass for one position (a multiply-add counts 2;
  // matmuls and convolutions only). A training step costs about 3 times this.
  double forward_flops() const;
  // A lower bound on the weights (parameters) of the net: its convolutions and matrices,
  // without biases and norms. resolved() checks it against MAX_PARAMETERS, and a model file's
  // tensors must hold at least this many floats before its net is built.
  int64_t min_parameters() const;
  // "resnet 6x32", "resnet 6x32 lines", "resnet 6x32 pairs paths", "mlp 4096", "conv 8x128 fc 1024", "attention 6x64 h4
  // ff128", then the inputs when they are not the predecessor's planes: "resnet 6x32 +state".
  std::string describe() const;
};

}  // namespace legalnet::nn
