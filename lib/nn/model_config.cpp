#include "nn/model_config.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "encode/attack_planes.h"
#include "encode/encode.h"
#include "util/choices.h"
#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

namespace legalnet::nn {

// The nets, built in nn/models.cpp.
std::shared_ptr<PolicyNet> make_mlp(const ModelConfig& c);
std::shared_ptr<PolicyNet> make_conv(const ModelConfig& c);
std::shared_ptr<PolicyNet> make_resnet(const ModelConfig& c);
std::shared_ptr<PolicyNet> make_attention(const ModelConfig& c);

namespace {

constexpr double BOARD_SQUARES = 64;
double input_floats(const ModelConfig& c) { return c.input_planes(); }
double outputs(const ModelConfig& c) { return c.geometric_head ? encode::GEOMETRIC_INDICES : encode::MOVE_INDICES; }
double conv3x3_flops(double from, double to) { return 2 * BOARD_SQUARES * from * to * 9; }
std::string with_inputs(const ModelConfig& c) {
  return c.inputs == encode::InputKind::PLANES ? "" : std::string(" +") + c.inputs_name();
}
std::string size_of(const ModelConfig& c) { return std::to_string(c.blocks) + "x" + std::to_string(c.channels); }

// Sizes as resolved() leaves them (each at most 65536): no product below overflows int64.
const ModelSpec MLP{
    ModelKind::MLP,
    "mlp",
    "a multilayer perceptron: the planes, one hidden layer, the move logits",
    {.hidden = 4096},
    {.hidden = "hidden width"},
    false,
    [](const ModelConfig& c) { return 2 * (input_floats(c) * BOARD_SQUARES * c.hidden + c.hidden * outputs(c)); },
    [](const ModelConfig& c) {
      return int64_t(c.input_planes()) * 64 * c.hidden + int64_t(c.hidden) * int64_t(outputs(c));
    },
    [](const ModelConfig& c) { return "mlp " + std::to_string(c.hidden) + with_inputs(c); },
    make_mlp};

const ModelSpec CONV{
    ModelKind::CONV,
    "conv",
    "3x3 convolutions, then a fully connected layer and the move logits",
    {.hidden = 1024, .blocks = 8, .channels = 128},
    {.hidden = "FC width", .blocks = "blocks", .channels = "filters"},
    true,
    [](const ModelConfig& c) {
      const double d = c.channels;
      return conv3x3_flops(input_floats(c), d) + (c.blocks - 1) * conv3x3_flops(d, d) +
             2 * (d * BOARD_SQUARES * c.hidden + c.hidden * outputs(c));
    },
    [](const ModelConfig& c) {
      const int64_t in = c.input_planes(), d = c.channels, ff = c.hidden;
      return in * 9 * d + (c.blocks - 1) * 9 * d * d + d * 64 * ff + ff * int64_t(outputs(c));
    },
    [](const ModelConfig& c) { return "conv " + size_of(c) + " fc " + std::to_string(c.hidden) + with_inputs(c); },
    make_conv};

const ModelSpec RESNET{
    ModelKind::RESNET,
    "resnet",
    "residual 3x3 blocks and a head scoring each move from its from- and to-squares",
    {.blocks = 6, .channels = 32},
    {.blocks = "blocks", .channels = "filters"},
    true,
    [](const ModelConfig& c) {
      const double d = c.channels;
      // Line mixing is one [64 x 64] matrix per channel applied densely (nn/models.h: LineMixing).
      const double lines = c.mixing == Mixing::LINES ? 2 * BOARD_SQUARES * BOARD_SQUARES * d : 0;
      // A ray scan: its two linear maps per square (d -> 2r and 8r -> d); the walks' 2 per value.
      const double r = ray_scan_width(c.channels);
      const double rays =
          c.mixing == Mixing::RAYS ? 2 * BOARD_SQUARES * (d * 2 * r + 8 * r * d) + 2 * BOARD_SQUARES * 8 * r : 0;
      // The pairs head: a 1x1 convolution to a query and a key per square, their 64 x 64 products.
      const double pairs = c.policy_head == PolicyHead::PAIRS
                               ? 2 * BOARD_SQUARES * d * 2 * d + 2 * BOARD_SQUARES * BOARD_SQUARES * d
                               : 0;
      // The paths: a 1x1 convolution to one value a square, summed into each move along the
      // squares it passes over (a [64 x 1792] product, dense).
      const double paths = c.paths ? 2 * BOARD_SQUARES * d + 2 * BOARD_SQUARES * encode::GEOMETRIC_INDICES : 0;
      // The vetoes: a 1x1 convolution to the from- and to-values; per veto and move a sum, a
      // softplus and the sum over the vetoes (elementwise, counted as the ray scans' walks are).
      const double veto_values = 2 * VETO_LINES * VETOES_PER_LINE;
      const double vetoes =
          c.vetoes ? 2 * BOARD_SQUARES * d * veto_values + 3 * VETOES_PER_LINE * encode::GEOMETRIC_INDICES : 0;
      // The input skip: a 1x1 convolution of the input planes, added to the tower's output.
      const double skip = c.input_skip ? 2 * BOARD_SQUARES * input_floats(c) * d : 0;
      return conv3x3_flops(input_floats(c), d) + c.blocks * (2.0 * conv3x3_flops(d, d) + lines + rays) +
             2 * BOARD_SQUARES * d * 64 + pairs + paths + vetoes + skip;
    },
    [](const ModelConfig& c) {
      const int64_t in = c.input_planes(), d = c.channels;
      const int64_t r = ray_scan_width(c.channels), rays = c.mixing == Mixing::RAYS ? d * 2 * r + 8 * r * d : 0;
      return in * 9 * d + c.blocks * (2 * 9 * d * d + rays) + d * 64 +
             (c.policy_head == PolicyHead::PAIRS ? 2 * d * d : 0) + d * encode::rule_target_planes(c.rule_targets()) +
             (c.paths ? d : 0) + (c.vetoes ? d * 2 * VETO_LINES * VETOES_PER_LINE : 0) + (c.input_skip ? in * d : 0);
    },
    [](const ModelConfig& c) {
      return "resnet " + size_of(c) + (c.squeeze_excitation ? " se" : "") +
             (c.mixing == Mixing::NONE ? "" : std::string(" ") + c.mixing_name()) +
             (c.policy_head == PolicyHead::TYPES ? "" : std::string(" ") + c.policy_head_name()) +
             (c.paths ? " paths" : "") + (c.vetoes ? " vetoes" : "") + (c.input_skip ? " skip" : "") +
             (c.rules_head ? c.rule_lines ? " rules-lines" : " rules" : "") + with_inputs(c);
    },
    make_resnet,
    true,
    1e-2,
    25000,
    PolicyHead::PAIRS};

const ModelSpec ATTENTION{ModelKind::ATTENTION,
                          "attention",
                          "a transformer over the 64 squares; a move's logit from its two squares",
                          {.blocks = 6, .channels = 64, .heads = 4},
                          {.hidden = "feed-forward width (2 x channels)",
                           .blocks = "layers",
                           .channels = "token width",
                           .heads = "heads per layer"},
                          true,
                          [](const ModelConfig& c) {
                            const double d = c.channels, hidden = c.hidden;
                            const double per_layer = 2 * BOARD_SQUARES * (3 * d * d + d * d + 2 * d * hidden) +
                                                     2 * 2 * BOARD_SQUARES * BOARD_SQUARES * d;
                            return 2 * BOARD_SQUARES * input_floats(c) * d + c.blocks * per_layer +
                                   2 * BOARD_SQUARES * 2 * d * d + 2 * BOARD_SQUARES * BOARD_SQUARES * d;
                          },
                          [](const ModelConfig& c) {
                            const int64_t in = c.input_planes(), d = c.channels, ff = c.hidden;
                            return in * d + c.blocks * (4 * d * d + 2 * d * ff) + 2 * d * d;
                          },
                          [](const ModelConfig& c) {
                            return "attention " + size_of(c) + " h" + std::to_string(c.heads) + " ff" +
                                   std::to_string(c.hidden) + with_inputs(c);
                          },
                          make_attention};

}  // namespace

const std::array<ModelSpec, 4> MODEL_SPECS = {MLP, CONV, RESNET, ATTENTION};

const ModelSpec& model_spec(ModelKind kind) { return choice_of(MODEL_SPECS, kind); }

ModelKind parse_model_kind(std::string_view name) { return find_choice(MODEL_SPECS, name, "model").value; }

std::string size_help(const char* SizeMeanings::*meaning, int ModelSizes::*size) {
  struct Group {
    std::string kinds, meaning, defaults;
  };
  std::vector<Group> groups;
  for (const ModelSpec& spec : MODEL_SPECS) {
    const char* what = spec.sizes.*meaning;
    if (what == nullptr) continue;
    if (groups.empty() || groups.back().meaning != what) groups.push_back({"", what, ""});
    Group& g = groups.back();
    g.kinds.append(g.kinds.empty() ? "" : "/").append(spec.name);
    if (const int d = spec.defaults.*size; d != 0)
      g.defaults.append(g.defaults.empty() ? "" : " / ").append(std::to_string(d));
  }
  std::string help;
  for (const Group& g : groups) {
    help.append(help.empty() ? "" : "; ").append(g.kinds).append(": ").append(g.meaning);
    if (!g.defaults.empty()) help.append(" (").append(g.defaults).append(")");
  }
  return help;
}

ModelConfig ModelConfig::resolved() const {
  ModelConfig c = *this;
  const ModelSpec& spec = model_spec(c.kind);
  if (c.hidden == 0) c.hidden = spec.defaults.hidden;
  if (c.blocks == 0) c.blocks = spec.defaults.blocks;
  if (c.channels == 0) c.channels = spec.defaults.channels;
  if (c.heads == 0) c.heads = spec.defaults.heads;
  if (c.kind == ModelKind::ATTENTION && c.hidden == 0) c.hidden = 2 * c.channels;
  if (c.hidden < 0 || c.blocks < 0 || c.channels < 0 || c.heads < 0 || c.hidden > MAX_SIZES.hidden ||
      c.blocks > MAX_SIZES.blocks || c.channels > MAX_SIZES.channels || c.heads > MAX_SIZES.heads)
    throw Error("model sizes out of range: " + c.describe());
  if (spec.uses_blocks && (c.blocks < 1 || c.channels < 1))
    throw Error(std::string("a ") + spec.name + " needs blocks and channels >= 1");
  if (c.mixing != Mixing::NONE && c.kind != ModelKind::RESNET)
    throw Error(std::string("mixing '") + c.mixing_name() + "' is a resnet option, not " + spec.name + "'s");
  if (c.policy_head == PolicyHead::AUTO)
    throw Error("policy head 'auto' is train's choice (--policy-head), not a model's: types or pairs");
  if (c.policy_head != PolicyHead::TYPES && c.kind != ModelKind::RESNET)
    throw Error(std::string("policy head '") + c.policy_head_name() + "' is a resnet option, not " + spec.name + "'s");
  if (c.rules_head && c.kind != ModelKind::RESNET)
    throw Error(std::string("the rules head (train --rules-weight) is a resnet option, not ") + spec.name + "'s");
  if (c.rule_lines && !c.rules_head)
    throw Error("the rule lines (train --rule-lines) are targets of the rules head: give --rules-weight too");
  if (c.paths && c.kind != ModelKind::RESNET)
    throw Error(std::string("the paths (train --paths) are a resnet option, not ") + spec.name + "'s");
  if (c.vetoes && c.kind != ModelKind::RESNET)
    throw Error(std::string("the vetoes (train --vetoes) are a resnet option, not ") + spec.name + "'s");
  if (c.input_skip && c.kind != ModelKind::RESNET)
    throw Error(std::string("the input skip (train --input-skip) is a resnet option, not ") + spec.name + "'s");
  if (c.kind == ModelKind::ATTENTION && c.channels % c.heads != 0)
    throw Error("attention: --channels " + std::to_string(c.channels) + " must be a multiple of --heads " +
                std::to_string(c.heads));
  if (c.min_parameters() > MAX_PARAMETERS)
    throw Error("model too large: " + c.describe() + " has at least " + std::to_string(c.min_parameters()) +
                " weights (at most " + std::to_string(MAX_PARAMETERS) + ")");
  return c;
}

std::string ModelConfig::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = kind_name();
  j["hidden"] = hidden;
  j["blocks"] = blocks;
  j["channels"] = channels;
  j["heads"] = heads;
  j["squeeze_excitation"] = squeeze_excitation;
  j["geometric_head"] = geometric_head;
  j["mixing"] = mixing_name();
  j["policy_head"] = policy_head_name();
  j["input_kind"] = inputs_name();
  if (rules_head) j["rules_head"] = true;  // files without it: the net without the head
  if (rule_lines) j["rule_lines"] = true;  // files without it: the 3 attack planes' head
  if (paths) j["paths"] = true;            // files without it: the net without the paths
  if (vetoes) j["vetoes"] = true;          // files without it: the net without the vetoes
  if (input_skip) j["input_skip"] = true;  // files without it: the net without the input skip
  return j.dump();
}

namespace {

// The keys of a model file's config: each value's JSON type and range, checked before it is
// converted (nlohmann's get<int>() takes 1.5 as 1, 2^32+64 as 64 and true as 1).
// python/legalnet/model_file.py's CONFIG_KEYS is the same table, and tests/testdata/
// model_configs.json feeds the same configs to both (ModelFile.ConfigRules..., test_model_files).
enum class KeyType { STRING, SIZE, BOOL };
struct ConfigKey {
  const char* name;
  KeyType type;
  const char* absent;  // the value of a key older files lack (as JSON), or nullptr: required
};
constexpr ConfigKey CONFIG_KEYS[] = {
    {"kind", KeyType::STRING, nullptr},
    {"hidden", KeyType::SIZE, nullptr},
    {"blocks", KeyType::SIZE, nullptr},
    {"channels", KeyType::SIZE, nullptr},
    {"heads", KeyType::SIZE, "0"},  // before the attention model
    {"squeeze_excitation", KeyType::BOOL, nullptr},
    {"geometric_head", KeyType::BOOL, nullptr},
    {"mixing", KeyType::STRING, "\"none\""},        // before line mixing
    {"policy_head", KeyType::STRING, "\"types\""},  // before the pairs head
    // "inputs" in files written before the name was made one; neither before the attack planes
    // (the predecessor's planes then): from_json reads "inputs" in its place.
    {"input_kind", KeyType::STRING, "\"planes\""},
    {"inputs", KeyType::STRING, "\"planes\""},
    {"rules_head", KeyType::BOOL, "false"},  // nets trained without train --rules-weight
    {"rule_lines", KeyType::BOOL, "false"},  // nets trained without train --rule-lines
    {"paths", KeyType::BOOL, "false"},       // nets trained before train --paths
    {"vetoes", KeyType::BOOL, "false"},      // nets trained before train --vetoes
    {"input_skip", KeyType::BOOL, "false"},  // nets trained before train --input-skip
};

// A size of the config: an integer (not 1.0, not true) in 0..65536, the largest of MAX_SIZES;
// resolved() checks each against its own cap.
int size_value(const nlohmann::json& v, const char* key) {
  if (!v.is_number_integer()) throw Error(std::string("the config's '") + key + "' is not an integer");
  if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(MAX_SIZES.hidden) : v.get<int64_t>() < 0)
    throw Error(std::string("the config's '") + key + "' is " + json_excerpt(v) + ", not in 0.." +
                std::to_string(MAX_SIZES.hidden));
  return int(v.get<int64_t>());
}

}  // namespace

ModelConfig ModelConfig::from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = parse_json(text, JsonLimits{.max_bytes = 1 << 16});
  } catch (const JsonError& e) {
    throw Error(std::string("bad model description: ") + e.what());
  }
  if (!j.is_object()) throw Error("bad model description: not a JSON object");
  ModelConfig c;
  nlohmann::json v;
  for (const ConfigKey& key : CONFIG_KEYS) {
    const bool present = j.contains(key.name);
    if (!present && !key.absent) throw Error(std::string("bad model description: no '") + key.name + "'");
    v[key.name] = present ? j.at(key.name) : nlohmann::json::parse(key.absent);
    const bool typed = key.type == KeyType::STRING ? v[key.name].is_string()
                       : key.type == KeyType::BOOL ? v[key.name].is_boolean()
                                                   : v[key.name].is_number();
    if (!typed)
      throw Error(std::string("bad model description: the config's '") + key.name + "' is not " +
                  (key.type == KeyType::STRING ? "a string"
                   : key.type == KeyType::BOOL ? "true or false"
                                               : "an integer"));
    // The kind first (the table's first row): a file of another program says so before its sizes.
    if (&key == &CONFIG_KEYS[0]) c.kind = parse_model_kind(v["kind"].get<std::string>());
  }
  try {
    c.hidden = size_value(v["hidden"], "hidden");
    c.blocks = size_value(v["blocks"], "blocks");
    c.channels = size_value(v["channels"], "channels");
    c.heads = size_value(v["heads"], "heads");
  } catch (const Error& e) {
    throw Error(std::string("bad model description: ") + e.what());
  }
  c.squeeze_excitation = v["squeeze_excitation"].get<bool>();
  c.geometric_head = v["geometric_head"].get<bool>();
  c.inputs = encode::parse_input_kind(v[j.contains("input_kind") ? "input_kind" : "inputs"].get<std::string>());
  c.mixing = find_choice(MIXINGS, v["mixing"].get<std::string>(), "mixing").value;
  c.policy_head = find_choice(POLICY_HEADS, v["policy_head"].get<std::string>(), "policy head").value;
  c.rules_head = v["rules_head"].get<bool>();
  c.rule_lines = v["rule_lines"].get<bool>();
  c.paths = v["paths"].get<bool>();
  c.vetoes = v["vetoes"].get<bool>();
  c.input_skip = v["input_skip"].get<bool>();
  return c.resolved();
}

double ModelConfig::forward_flops() const {
  const ModelConfig c = resolved();
  return model_spec(c.kind).forward_flops(c);
}

int64_t ModelConfig::min_parameters() const { return model_spec(kind).min_parameters(*this); }

std::string ModelConfig::describe() const { return model_spec(kind).describe(*this); }

}  // namespace legalnet::nn
