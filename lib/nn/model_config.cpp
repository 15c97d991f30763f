#include "nn/model_config.h"

#include <nlohmann/json.hpp>

#include "encode/encode.h"
#include "util/error.h"

namespace legalnet::nn {

ModelConfig ModelConfig::resolved() const {
  ModelConfig c = *this;
  if (c.kind == "mlp") {
    if (c.hidden == 0) c.hidden = 4096;
  } else if (c.kind == "conv") {
    if (c.hidden == 0) c.hidden = 1024;
    if (c.blocks == 0) c.blocks = 8;
    if (c.channels == 0) c.channels = 128;
  } else if (c.kind == "resnet") {
    if (c.blocks == 0) c.blocks = 6;
    if (c.channels == 0) c.channels = 32;
  } else if (c.kind == "attention") {
    if (c.blocks == 0) c.blocks = 6;
    if (c.channels == 0) c.channels = 64;
    if (c.heads == 0) c.heads = 4;
    if (c.hidden == 0) c.hidden = 2 * c.channels;
  } else {
    throw Error("unknown model '" + c.kind + "' (expected " + MODEL_KINDS + ")");
  }
  if (c.hidden < 0 || c.blocks < 0 || c.channels < 0 || c.heads < 0 || c.hidden > 65536 || c.blocks > 256 ||
      c.channels > 4096 || c.heads > 64)
    throw Error("model sizes out of range: " + c.describe());
  if (c.kind != "mlp" && (c.blocks < 1 || c.channels < 1))
    throw Error("a " + c.kind + " needs blocks and channels >= 1");
  if (c.mixing != "none" && c.mixing != "lines")
    throw Error("unknown mixing '" + c.mixing + "' (expected " + MIXINGS + ")");
  if (c.mixing != "none" && c.kind != "resnet")
    throw Error("mixing '" + c.mixing + "' is a resnet option, not " + c.kind + "'s");
  if (c.kind == "attention" && c.channels % c.heads != 0)
    throw Error("attention: --channels " + std::to_string(c.channels) + " must be a multiple of --heads " +
                std::to_string(c.heads));
  if (c.min_parameters() > MAX_PARAMETERS)
    throw Error("model too large: " + c.describe() + " has at least " + std::to_string(c.min_parameters()) +
                " weights (at most " + std::to_string(MAX_PARAMETERS) + ")");
  return c;
}

std::string ModelConfig::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = kind;
  j["hidden"] = hidden;
  j["blocks"] = blocks;
  j["channels"] = channels;
  j["heads"] = heads;
  j["squeeze_excitation"] = squeeze_excitation;
  j["geometric_head"] = geometric_head;
  j["mixing"] = mixing;
  j["inputs"] = inputs_name();
  return j.dump();
}

ModelConfig ModelConfig::from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    ModelConfig c;
    c.kind = j.at("kind").get<std::string>();
    c.hidden = j.at("hidden").get<int>();
    c.blocks = j.at("blocks").get<int>();
    c.channels = j.at("channels").get<int>();
    c.heads = j.value("heads", 0);  // absent in files written before the attention model
    c.squeeze_excitation = j.at("squeeze_excitation").get<bool>();
    c.geometric_head = j.at("geometric_head").get<bool>();
    c.inputs = encode::parse_input_kind(j.value("inputs", "planes"));  // absent before the attack planes
    c.mixing = j.value("mixing", "none");                               // absent before line mixing
    return c.resolved();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("bad model description: ") + e.what());
  }
}

double ModelConfig::forward_flops() const {
  const ModelConfig c = resolved();
  const double in = input_planes(), squares = 64, moves = c.geometric_head ? encode::GEOMETRIC_INDICES : 4096;
  const double d = c.channels, hidden = c.hidden;
  auto conv3x3 = [&](double from, double to) { return 2 * squares * from * to * 9; };
  if (c.kind == "mlp") return 2 * (in * squares * hidden + hidden * moves);
  if (c.kind == "conv")
    return conv3x3(in, d) + (c.blocks - 1) * conv3x3(d, d) + 2 * (d * squares * hidden + hidden * moves);
  if (c.kind == "attention") {
    const double per_layer = 2 * squares * (3 * d * d + d * d + 2 * d * hidden) + 2 * 2 * squares * squares * d;
    return 2 * squares * in * d + c.blocks * per_layer + 2 * squares * 2 * d * d + 2 * squares * squares * d;
  }
  // Line mixing is one [64 x 64] matrix per channel applied densely (nn/models.h: LineMixing).
  const double lines = c.mixing == "lines" ? 2 * squares * squares * d : 0;
  return conv3x3(in, d) + c.blocks * (2.0 * conv3x3(d, d) + lines) + 2 * squares * d * 64;
}

int64_t ModelConfig::min_parameters() const {
  // Sizes as resolved() leaves them (each at most 65536): no product below overflows int64.
  const int64_t in = input_planes(), d = channels, ff = hidden, squares = 64;
  const int64_t moves = geometric_head ? encode::GEOMETRIC_INDICES : encode::MOVE_INDICES;
  if (kind == "mlp") return in * squares * ff + ff * moves;
  if (kind == "conv") return in * 9 * d + (blocks - 1) * 9 * d * d + d * squares * ff + ff * moves;
  if (kind == "attention") return in * d + blocks * (4 * d * d + 2 * d * ff) + 2 * d * d;
  return in * 9 * d + blocks * 2 * 9 * d * d + d * squares;  // resnet
}

std::string ModelConfig::describe() const {
  const std::string with = inputs == encode::InputKind::PLANES ? "" : std::string(" +") + inputs_name();
  const std::string size = std::to_string(blocks) + "x" + std::to_string(channels);
  if (kind == "mlp") return "mlp " + std::to_string(hidden) + with;
  if (kind == "conv") return "conv " + size + " fc " + std::to_string(hidden) + with;
  if (kind == "attention")
    return "attention " + size + " h" + std::to_string(heads) + " ff" + std::to_string(hidden) + with;
  return "resnet " + size + (squeeze_excitation ? " se" : "") + (mixing == "none" ? "" : " " + mixing) + with;
}

}  // namespace legalnet::nn
