// safetensors files (huggingface.co/docs/safetensors), the format of model files and
// checkpoints: tensors as raw bytes and text metadata, nothing that runs when read. No torch
// here: the reader checks a file from anyone before a byte of its tensors is allocated.
//
// Layout: an 8-byte little-endian header length N; N bytes of JSON
//   {"NAME": {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [BEGIN, END]}, ...,
//    "__metadata__": {"KEY": "TEXT", ...}}
// then the data: each tensor's bytes, row-major, little-endian, at [BEGIN, END) counted from the
// first byte after the header. The tensors tile the data exactly (no gap, no overlap) and the
// data ends where the file ends.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace legalnet::nn::safetensors {

// The dtypes legalnet's models hold; a file with any other is refused.
enum class Dtype : uint8_t { F32, I64, BOOL };
const char* dtype_name(Dtype dtype);  // "F32", "I64", "BOOL"
size_t dtype_size(Dtype dtype);

// What a reader accepts. A model of the largest configuration train admits has a few hundred
// tensors and a header of tens of kilobytes.
struct Limits {
  uint64_t max_header_bytes = uint64_t(16) << 20;
  size_t max_tensors = 100'000;
  size_t max_rank = 8;
  uint64_t max_data_bytes = uint64_t(16) << 30;
  // false for a file of the tool's own in a run folder (a checkpoint): read by the run-file
  // rules, never through a symbolic link planted under its name.
  bool follow_links = true;
};

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::F32;
  std::vector<int64_t> shape;
  uint64_t elements = 0;
  uint64_t begin = 0, end = 0;  // in the data, which starts at data_start()
  uint64_t bytes() const { return end - begin; }
};

// The metadata entry every file Writer writes carries: the zlib CRC-32 of its tensors' bytes, the
// tensors in the (byte) order of their names, as 8 lowercase hex digits; whatever order a writer
// lays them out in (safetensors' own sorts them otherwise), the same tensors give the same value.
// Reader checks it where present, so a flipped byte in a copied model or checkpoint is one clear
// line, not silently wrong figures.
constexpr const char* DATA_CRC_KEY = "legalnet_data_crc32";

// Opens `path` and checks its header whole: the length against the file's size and the limits,
// the JSON, every tensor's dtype, shape and offsets (its byte count is its elements times its
// dtype's size), and that the tensors tile the data to the end of the file. Throws
// legalnet::Error with the path and the field at fault. A FIFO or device is refused (a reader
// would wait on one forever).
class Reader {
 public:
  explicit Reader(std::string path, const Limits& limits = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The metadata value for `key`; throws naming the file when it is absent.
  const std::string& metadata(const std::string& key) const;
  // In the order of their data.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(const std::string& name) const;
  uint64_t data_bytes() const { return data_bytes_; }
  // Copies one tensor's bytes into `out` (info.bytes() of them).
  void read(const TensorInfo& info, void* out) const;

 private:
  std::string path_;
  // The header and the tensor table, checked against the file and the limits.
  void parse(const Limits& limits);
  // The steps of parse(): the header's JSON (its length checked against the file and the
  // limits), one tensor's entry, and the tensors tiling the data.
  nlohmann::json read_header(uint64_t size, const Limits& limits);
  TensorInfo tensor_of(const std::string& name, const nlohmann::json& entry, const Limits& limits) const;
  void check_tiling();
  // The data against DATA_CRC_KEY's checksum, where the file has one.
  void check_data_crc() const;
  int fd_ = -1;
  uint64_t data_start_ = 0, data_bytes_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> by_name_;
};

// Collects tensors (by pointer: their bytes must stay alive until write) and metadata, and
// writes them atomically: a temporary renamed onto `path` when complete (a symbolic link at
// `path` is replaced, never written through: the names are the tool's own, in a run folder).
class Writer {
 public:
  void add(std::string name, Dtype dtype, std::vector<int64_t> shape, const void* data);
  void set_metadata(const std::string& key, std::string value) { metadata_[key] = std::move(value); }
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string name;
    Dtype dtype;
    std::vector<int64_t> shape;
    const void* data;
    uint64_t bytes;
  };
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

// `text` with every byte that is not printable ASCII written as \xNN, cut after 200 bytes
// (ending "..."): names read from a file are quoted with it before they reach a terminal.
std::string printable(const std::string& text);

}  // namespace legalnet::nn::safetensors
