// A model's architecture and sizes: saved beside the weights so that a model file alone
// rebuilds its network. No torch here, so tools and tests can read it cheaply.
#pragma once

#include <string>

namespace legalnet::nn {

struct ModelConfig {
  std::string kind = "resnet";      // mlp | conv | resnet
  int hidden = 0;                   // mlp: hidden width (default 4096); conv: FC width (default 1024)
  int blocks = 0;                   // conv / resnet: number of blocks
  int channels = 0;                 // conv / resnet: filters per block
  bool squeeze_excitation = false;  // resnet: SE in every block
  // mlp / conv: a final layer of the 1792 possibly-legal outputs only, the other 2304 fixed off
  // (resnet always does this through its move-type head).
  bool geometric_head = true;
  // The input: "planes", the predecessor's 7 (encode.h), or "attacks", those and 3 planes of
  // attacked squares, pins and check lines (encode/attack_planes.h).
  std::string inputs = "planes";
  int input_planes() const;

  // Fills unset sizes with the kind's defaults; throws legalnet::Error for an unknown kind or
  // impossible sizes.
  ModelConfig resolved() const;
  std::string to_json() const;
  static ModelConfig from_json(const std::string& json);
  // "resnet 6x32", "mlp 4096", "conv 8x128 fc 1024".
  std::string describe() const;
};

}  // namespace legalnet::nn
