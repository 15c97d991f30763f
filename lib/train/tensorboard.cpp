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
  std::string summary;
  for (const Scalar& s : scalars) {
    std::string value;
    put_bytes(value, 1, s.tag);
    put_key(value, 2, FIXED32);
    put_fixed(value, bits_of(s.value), 4);
    put_bytes(summary, 1, value);
  }
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
