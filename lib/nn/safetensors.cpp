#include "nn/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>
#include <vector>

#include "util/error.h"
#include "util/files.h"
#include "util/json.h"

namespace legalnet::nn::safetensors {
namespace {

using nlohmann::json;

constexpr Dtype DTYPES[] = {Dtype::F32, Dtype::I64, Dtype::BOOL};

std::string bytes_text(uint64_t n) { return std::to_string(n) + " bytes"; }

// Reads exactly `size` bytes at `offset`, or throws.
// 8 lowercase hex digits.
std::string crc_text(unsigned long crc) {
  char text[9];
  std::snprintf(text, sizeof text, "%08lx", crc & 0xffffffffUL);
  return text;
}

void read_at(int fd, const std::string& path, uint64_t offset, void* out, uint64_t size) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd, p, size_t(std::min<uint64_t>(size, 1 << 30)), off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path + ": cannot read: " + std::strerror(errno));
    if (n == 0) throw Error(path + ": the file ended early (was it changed while read?)");
    p += n;
    offset += uint64_t(n);
    size -= uint64_t(n);
  }
}

// An unsigned integer of the header, or throws naming the tensor and field.
uint64_t unsigned_field(const json& v, const std::string& where) {
  if (!v.is_number_unsigned()) throw Error(where + " is not a non-negative integer");
  return v.get<uint64_t>();
}

}  // namespace

const char* dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::F32: return "F32";
    case Dtype::I64: return "I64";
    case Dtype::BOOL: return "BOOL";
  }
  return "?";
}

size_t dtype_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::F32: return 4;
    case Dtype::I64: return 8;
    case Dtype::BOOL: return 1;
  }
  return 0;
}

std::string printable(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (out.size() >= 200) return out + "...";  // a name may be megabytes long
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

Reader::Reader(std::string path, const Limits& limits) : path_(std::move(path)) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; only a regular file is read.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (limits.follow_links ? 0 : O_NOFOLLOW));
  if (fd_ < 0 && errno == ELOOP && !limits.follow_links)
    throw Error(path_ + ": cannot read: a symbolic link (a run's files are never read through one)");
  if (fd_ < 0) throw Error(path_ + ": cannot read: " + std::strerror(errno));
  try {
    parse(limits);
  } catch (...) {  // a constructor that throws runs no destructor: the descriptor is closed here
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

void Reader::parse(const Limits& limits) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw Error(path_ + ": cannot read: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(path_ + ": not a regular file");
  const json header = read_header(uint64_t(st.st_size), limits);
  for (const auto& [name, entry] : header.items()) {
    if (name != "__metadata__") {
      tensors_.push_back(tensor_of(name, entry, limits));
      continue;
    }
    if (!entry.is_object()) throw Error(path_ + ": __metadata__ is not a JSON object");
    for (const auto& [key, value] : entry.items()) {
      if (!value.is_string()) throw Error(path_ + ": __metadata__ '" + printable(key) + "' is not a string");
      metadata_[key] = value.get<std::string>();
    }
  }
  check_tiling();
  for (size_t i = 0; i < tensors_.size(); ++i) by_name_[tensors_[i].name] = i;
  check_data_crc();
}

json Reader::read_header(uint64_t size, const Limits& limits) {
  unsigned char start[8];
  if (size < 8) throw Error(path_ + ": not a safetensors file (" + bytes_text(size) + ", no header length)");
  read_at(fd_, path_, 0, start, 8);
  if (std::memcmp(start, "PK\x03\x04", 4) == 0)
    throw Error(
        path_ +
        ": a TorchScript archive (the .pt format of earlier legalnet), which can run code when loaded, so it is not "
        "read; convert it, read as data, with: python -m legalnet convert OLD.pt NEW.safetensors");
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | start[i];
  if (header_bytes > size - 8)
    throw Error(path_ + ": not a safetensors file (header length " + std::to_string(header_bytes) +
                " runs past the end of the file, " + bytes_text(size) + ")");
  if (header_bytes > limits.max_header_bytes)
    throw Error(path_ + ": safetensors header of " + bytes_text(header_bytes) + " (at most " +
                bytes_text(limits.max_header_bytes) + ")");
  data_start_ = 8 + header_bytes;
  data_bytes_ = size - data_start_;
  if (data_bytes_ > limits.max_data_bytes)
    throw Error(path_ + ": " + bytes_text(data_bytes_) + " of tensors (at most " + bytes_text(limits.max_data_bytes) +
                ")");

  std::string text(header_bytes, '\0');
  read_at(fd_, path_, 8, text.data(), header_bytes);
  json header;
  try {
    // Bounded: a header nested thousands of levels deep once overflowed the stack.
    header = parse_json(text, JsonLimits{.max_bytes = size_t(limits.max_header_bytes)});
  } catch (const JsonError& e) {
    throw Error(path_ + ": safetensors header is " + e.what());
  }
  if (!header.is_object()) throw Error(path_ + ": safetensors header is not a JSON object");
  if (header.size() > limits.max_tensors + 1)
    throw Error(path_ + ": " + std::to_string(header.size()) + " tensors (at most " +
                std::to_string(limits.max_tensors) + ")");
  return header;
}

TensorInfo Reader::tensor_of(const std::string& name, const json& entry, const Limits& limits) const {
  const std::string where = path_ + ": tensor '" + printable(name) + "'";
  if (!entry.is_object() || entry.size() != 3 || !entry.contains("dtype") || !entry.contains("shape") ||
      !entry.contains("data_offsets"))
    throw Error(where + " is not {dtype, shape, data_offsets}");
  TensorInfo t;
  t.name = name;
  const json& dtype = entry["dtype"];
  const auto known = std::find_if(std::begin(DTYPES), std::end(DTYPES), [&](Dtype d) {
    return dtype.is_string() && dtype.get<std::string>() == dtype_name(d);
  });
  if (known == std::end(DTYPES))
    throw Error(where + ": dtype " + json_excerpt(dtype) + " is not one legalnet reads (F32, I64, BOOL)");
  t.dtype = *known;
  const json& shape = entry["shape"];
  if (!shape.is_array() || shape.size() > limits.max_rank)
    throw Error(where + ": shape is not an array of at most " + std::to_string(limits.max_rank) + " sizes");
  // Elements counted with every dimension bounded by the data's size: no overflow below.
  t.elements = 1;
  for (const json& d : shape) {
    const uint64_t n = unsigned_field(d, where + ": shape " + json_excerpt(shape));
    if (n > data_bytes_ || (n > 0 && t.elements > data_bytes_ / n))
      throw Error(where + ": shape " + json_excerpt(shape) + " is larger than the file's " + bytes_text(data_bytes_) +
                  " of tensors");
    t.shape.push_back(int64_t(n));
    t.elements *= n;
  }
  const json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) throw Error(where + ": data_offsets is not [begin, end]");
  t.begin = unsigned_field(offsets[0], where + ": data_offsets");
  t.end = unsigned_field(offsets[1], where + ": data_offsets");
  if (t.begin > t.end || t.end > data_bytes_)
    throw Error(where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                "] are not within the file's " + bytes_text(data_bytes_) + " of tensors");
  if (t.bytes() != t.elements * dtype_size(t.dtype))
    throw Error(where + ": " + bytes_text(t.bytes()) + " of data for " + std::to_string(t.elements) + " " +
                dtype_name(t.dtype) + " values");
  return t;
}

// The tensors tile the data: sorted by offset, each starts where the one before ended.
void Reader::check_tiling() {
  std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const TensorInfo& t : tensors_) {
    if (t.begin != at)
      throw Error(path_ + ": tensor '" + printable(t.name) + "' starts at byte " + std::to_string(t.begin) +
                  (t.begin < at ? " inside the tensor before it" : ", after a gap") + " (expected " +
                  std::to_string(at) + ")");
    at = t.end;
  }
  if (at != data_bytes_)
    throw Error(path_ + ": the tensors cover " + bytes_text(at) + " of the file's " + bytes_text(data_bytes_) +
                " of data");
}

Reader::~Reader() {
  if (fd_ >= 0) ::close(fd_);
}

const std::string& Reader::metadata(const std::string& key) const {
  const auto it = metadata_.find(key);
  if (it == metadata_.end()) throw Error(path_ + ": no '" + key + "' in the file's metadata");
  return it->second;
}

const TensorInfo* Reader::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

// The tensors' CRC-32 (zlib's, as Python's zlib.crc32), each tensor's bytes in the order of
// the names, read in 1 MiB pieces.
void Reader::check_data_crc() const {
  const auto stored = metadata_.find(DATA_CRC_KEY);
  if (stored == metadata_.end()) return;  // a file from before the checksum, or from another writer
  std::vector<char> buffer(1 << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const auto& [name, index] : by_name_) {
    const TensorInfo& t = tensors_[index];
    for (uint64_t at = 0; at < t.bytes(); at += buffer.size()) {
      const uint64_t n = std::min<uint64_t>(buffer.size(), t.bytes() - at);
      read_at(fd_, path_, data_start_ + t.begin + at, buffer.data(), n);
      crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), uInt(n));
    }
  }
  const std::string computed = crc_text(crc);
  if (stored->second != computed)
    throw Error(path_ + ": the tensors do not match their checksum (" + DATA_CRC_KEY + " " + printable(stored->second) +
                ", computed " + computed + "): the file is damaged; copy it again or retrain");
}

void Reader::read(const TensorInfo& info, void* out) const {
  read_at(fd_, path_, data_start_ + info.begin, out, info.bytes());
}

void Writer::add(std::string name, Dtype dtype, std::vector<int64_t> shape, const void* data) {
  uint64_t elements = 1;
  for (const int64_t d : shape) elements *= uint64_t(d);
  entries_.push_back({std::move(name), dtype, std::move(shape), data, elements * dtype_size(dtype)});
}

void Writer::write(const std::string& path) const {
  nlohmann::ordered_json header;
  std::map<std::string, std::string> metadata = metadata_;
  std::vector<const Entry*> by_name;
  for (const Entry& e : entries_) by_name.push_back(&e);
  std::sort(by_name.begin(), by_name.end(), [](const Entry* a, const Entry* b) { return a->name < b->name; });
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const Entry* e : by_name)
    for (uint64_t at = 0; at < e->bytes; at += 1u << 30)  // zlib takes a uInt a call
      crc = crc32(crc, static_cast<const Bytef*>(e->data) + at, uInt(std::min<uint64_t>(e->bytes - at, 1u << 30)));
  metadata[DATA_CRC_KEY] = crc_text(crc);
  header["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const Entry& e : entries_) {
    header[e.name] = {{"dtype", dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {at, at + e.bytes}}};
    at += e.bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as the reference writer does
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = char(uint64_t(text.size()) >> (8 * i) & 0xff);
  // Its files are a run folder's own (train's model and checkpoint): a link there is replaced.
  OutputFile out(path, Links::REPLACE);
  out.write(std::string_view(length, 8));
  out.write(text);
  for (const Entry& e : entries_) out.write(std::string_view(static_cast<const char*>(e.data), e.bytes));
  out.commit();
}

}  // namespace legalnet::nn::safetensors
