#include "nn/model_config.h"

#include <nlohmann/json.hpp>

#include "encode/attack_planes.h"
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
  } else {
    throw Error("unknown model '" + c.kind + "' (expected mlp, conv or resnet)");
  }
  if (c.hidden < 0 || c.blocks < 0 || c.channels < 0 || c.hidden > 65536 || c.blocks > 256 || c.channels > 4096)
    throw Error("model sizes out of range: " + c.describe());
  if (c.inputs != "planes" && c.inputs != "attacks")
    throw Error("unknown inputs '" + c.inputs + "' (expected planes or attacks)");
  if (c.kind != "mlp" && (c.blocks < 1 || c.channels < 1))
    throw Error("a " + c.kind + " needs blocks and channels >= 1");
  return c;
}

std::string ModelConfig::to_json() const {
  nlohmann::ordered_json j;
  j["kind"] = kind;
  j["hidden"] = hidden;
  j["blocks"] = blocks;
  j["channels"] = channels;
  j["squeeze_excitation"] = squeeze_excitation;
  j["geometric_head"] = geometric_head;
  j["inputs"] = inputs;
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
    c.squeeze_excitation = j.at("squeeze_excitation").get<bool>();
    c.geometric_head = j.at("geometric_head").get<bool>();
    c.inputs = j.value("inputs", "planes");  // absent in files written before attack planes
    return c.resolved();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("bad model description: ") + e.what());
  }
}

int ModelConfig::input_planes() const { return encode::PLANES + (inputs == "attacks" ? encode::ATTACK_PLANES : 0); }

std::string ModelConfig::describe() const {
  const std::string with = inputs == "attacks" ? " +attacks" : "";
  if (kind == "mlp") return "mlp " + std::to_string(hidden) + with;
  if (kind == "conv")
    return "conv " + std::to_string(blocks) + "x" + std::to_string(channels) + " fc " + std::to_string(hidden) + with;
  return "resnet " + std::to_string(blocks) + "x" + std::to_string(channels) + (squeeze_excitation ? " se" : "") + with;
}

}  // namespace legalnet::nn
