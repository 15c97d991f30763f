#include "train/tensorboard.h"

#include <array>
#include <cstring>

namespace legalnet::train::tensorboard {
namespace {

constexpr std::array<uint32_t, 256> CRC32C_TABLE = [] {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}();

void put_fixed(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char(uint8_t(value >> (8 * i)));
}

uint64_t get_fixed(std::string_view in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t(uint8_t(in[at + size_t(i)])) << (8 * i);
  return value;
}

void put_varint(std::string& out, uint64_t value) {
  for (; value >= 0x80; value >>= 7) out += char(uint8_t(value | 0x80));
  out += char(uint8_t(value));
}

// Reads a varint at `at`, moving past it; false when it runs past the end or over 10 bytes.
bool get_varint(std::string_view in, size_t& at, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 70 && at < in.size(); shift += 7) {
    const uint8_t byte = uint8_t(in[at++]);
    value |= uint64_t(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// Protobuf wire types.
constexpr int VARINT = 0, FIXED64 = 1, BYTES = 2, FIXED32 = 5;

void put_key(std::string& out, int field, int wire_type) { put_varint(out, uint64_t(field << 3 | wire_type)); }

void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, BYTES);
  put_varint(out, bytes.size());
  out += bytes;
}

template <class T>
uint64_t bits_of(T value) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t> bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Event fields 1 and 2; a step of -1 is left out (the file_version record has none).
std::string event_head(double wall_time, int64_t step) {
  std::string event;
  put_key(event, 1, FIXED64);
  put_fixed(event, bits_of(wall_time), 8);
  if (step >= 0) {
    put_key(event, 2, VARINT);
    put_varint(event, uint64_t(step));
  }
  return event;
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : data) crc = CRC32C_TABLE[(crc ^ uint8_t(c)) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

std::string record(std::string_view data) {
  std::string out;
  put_fixed(out, data.size(), 8);
  put_fixed(out, masked_crc32c(out), 4);
  out += data;
  put_fixed(out, masked_crc32c(data), 4);
  return out;
}

std::string file_version_event(double wall_time) {
  std::string event = event_head(wall_time, -1);
  put_bytes(event, 3, "brain.Event:2");
  return event;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars) {
  std::vector<std::string> values;
  for (const Scalar& s : scalars) values.push_back(scalar_value(s));
  return summary_event(wall_time, step, values);
}

std::string scalar_value(const Scalar& scalar) {
  std::string value;
  put_bytes(value, 1, scalar.tag);
  put_key(value, 2, FIXED32);
  put_fixed(value, bits_of(scalar.value), 4);
  return value;
}

// A Summary.Value { string tag = 1; TensorProto tensor = 8 (when not empty); SummaryMetadata
// metadata = 9 { PluginData plugin_data = 1 { string plugin_name = 1; bytes content = 2 } } }:
// what a plugin (text, hparams) reads; the content left out when empty.
namespace {
std::string plugin_value(std::string_view tag, std::string_view plugin_name, std::string_view content,
                         std::string_view tensor) {
  std::string plugin, metadata, value;
  put_bytes(plugin, 1, plugin_name);
  if (!content.empty()) put_bytes(plugin, 2, content);
  put_bytes(metadata, 1, plugin);
  put_bytes(value, 1, tag);
  if (!tensor.empty()) put_bytes(value, 8, tensor);
  put_bytes(value, 9, metadata);
  return value;
}
}  // namespace

std::string text_value(std::string_view tag, std::string_view markdown) {
  // TensorProto { DataType dtype = 1 (DT_STRING = 7); TensorShapeProto tensor_shape = 2
  // { repeated Dim dim = 2 { int64 size = 1 } }; repeated bytes string_val = 8; }
  std::string dim, shape, tensor;
  put_key(dim, 1, VARINT);
  put_varint(dim, 1);
  put_bytes(shape, 2, dim);
  put_key(tensor, 1, VARINT);
  put_varint(tensor, 7);
  put_bytes(tensor, 2, shape);
  put_bytes(tensor, 8, markdown);
  // The text plugin's content, TextPluginData at version 0, is empty.
  return plugin_value(tag, "text", "", tensor);
}

namespace {

// A Summary.Value of the HParams plugin: `tag`, and metadata.plugin_data { plugin_name "hparams",
// content HParamsPluginData { int32 version = 1 (0, left out); oneof data { Experiment
// experiment = 2; SessionStartInfo session_start_info = 3; ... } } }.
std::string hparams_value(std::string_view tag, int data_field, std::string_view data) {
  std::string content;
  put_bytes(content, data_field, data);
  return plugin_value(tag, "hparams", content, {});
}

void put_double(std::string& out, int field, double value) {
  put_key(out, field, FIXED64);
  put_fixed(out, bits_of(value), 8);
}

}  // namespace

std::string hparams_experiment_value(const std::vector<HParam>& hparams, const std::vector<std::string>& metric_tags) {
  // Experiment { repeated HParamInfo hparam_infos = 4 { string name = 1; DataType type = 4 };
  // repeated MetricInfo metric_infos = 5 { MetricName name = 1 { string tag = 2 } } }, with
  // DataType STRING = 1, BOOL = 2, FLOAT64 = 3.
  std::string experiment;
  for (const HParam& h : hparams) {
    std::string info;
    put_bytes(info, 1, h.name);
    put_key(info, 4, VARINT);
    put_varint(info, std::holds_alternative<double>(h.value) ? 3 : std::holds_alternative<bool>(h.value) ? 2 : 1);
    put_bytes(experiment, 4, info);
  }
  for (const std::string& tag : metric_tags) {
    std::string name, info;
    put_bytes(name, 2, tag);
    put_bytes(info, 1, name);
    put_bytes(experiment, 5, info);
  }
  return hparams_value("_hparams_/experiment", 2, experiment);
}

std::string hparams_session_start_value(const std::vector<HParam>& hparams, double start_time) {
  // SessionStartInfo { map<string, google.protobuf.Value> hparams = 1 (entries { string key = 1;
  // Value value = 2 }); double start_time_secs = 5 }, with Value { double number_value = 2;
  // string string_value = 3; bool bool_value = 4 }.
  std::string info;
  for (const HParam& h : hparams) {
    std::string value, entry;
    if (const double* number = std::get_if<double>(&h.value)) {
      put_double(value, 2, *number);
    } else if (const std::string* text = std::get_if<std::string>(&h.value)) {
      put_bytes(value, 3, *text);
    } else {
      put_key(value, 4, VARINT);
      put_varint(value, std::get<bool>(h.value) ? 1 : 0);
    }
    put_bytes(entry, 1, h.name);
    put_bytes(entry, 2, value);
    put_bytes(info, 1, entry);
  }
  put_double(info, 5, start_time);
  return hparams_value("_hparams_/session_start_info", 3, info);
}

std::string summary_event(double wall_time, int64_t step, const std::vector<std::string>& values) {
  std::string summary;
  for (const std::string& value : values) put_bytes(summary, 1, value);
  std::string event = event_head(wall_time, step);
  put_bytes(event, 5, summary);
  return event;
}

std::optional<int64_t> event_step(std::string_view event) {
  int64_t step = 0;
  for (size_t at = 0; at < event.size();) {
    uint64_t key, value;
    if (!get_varint(event, at, key)) return std::nullopt;
    switch (int(key & 7)) {
      case VARINT:
        if (!get_varint(event, at, value)) return std::nullopt;
        if (key >> 3 == 2) step = int64_t(value);
        break;
      case FIXED64: at += 8; break;
      case FIXED32: at += 4; break;
      case BYTES:
        if (!get_varint(event, at, value) || value > event.size() - at) return std::nullopt;
        at += value;
        break;
      default: return std::nullopt;
    }
    if (at > event.size()) return std::nullopt;
  }
  return step;
}

size_t records_through_step(std::string_view file, int64_t last_step) {
  size_t kept = 0;
  while (file.size() - kept >= 12) {
    const std::string_view head = file.substr(kept, 8);
    if (get_fixed(file, kept + 8, 4) != masked_crc32c(head)) break;
    const uint64_t length = get_fixed(file, kept, 8);
    if (length > file.size() - kept - 12 || file.size() - kept - 12 - length < 4) break;
    const std::string_view data = file.substr(kept + 12, length);
    if (get_fixed(file, kept + 12 + length, 4) != masked_crc32c(data)) break;
    const std::optional<int64_t> step = event_step(data);
    if (!step || *step > last_step) break;
    kept += 12 + length + 4;
  }
  return kept;
}

}  // namespace legalnet::train::tensorboard
