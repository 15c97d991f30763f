// libFuzzer target: the bounded JSON reader (util/json.h) and the safetensors reader
// (nn/safetensors.h), the two readers of model files and checkpoints that need no torch. The
// input goes, as it is, to the JSON reader (and what it accepts to json_excerpt), and as a
// safetensors file to the Reader, whose accepted tensors are all read and whose metadata values
// go through the JSON reader as load_model reads its config and training record. Errors are
// legalnet::Error; anything else escaping, a signal, a sanitizer report or a hang is a finding.
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "nn/safetensors.h"
#include "util/error.h"
#include "util/json.h"

namespace {

void read_json(const std::string& text) {
  try {
    const nlohmann::json j = legalnet::parse_json(text);
    if (legalnet::json_excerpt(j).size() > 203) __builtin_trap();  // 200 bytes and "..."
  } catch (const legalnet::JsonError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_json(std::string(reinterpret_cast<const char*>(data), size));
  static const std::string path = fuzz_input_path("safetensors", ".safetensors");
  if (!write_fuzz_input(path, data, size)) return 0;
  try {
    legalnet::nn::safetensors::Reader reader(path);
    std::vector<char> bytes;
    for (const auto& t : reader.tensors()) {
      bytes.resize(t.bytes());
      reader.read(t, bytes.data());
    }
    for (const auto& [key, value] : reader.metadata()) read_json(value);
  } catch (const legalnet::Error&) {
  }
  return 0;
}
