#include "data/dataset_identity.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "data/dataset_format.h"
#include "data/dataset_reader.h"

namespace legalnet::data {
namespace {

// 64-bit FNV-1a over values as 8 little-endian bytes each: the same on every machine.
class Fnv1a {
 public:
  void add(uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      hash_ ^= (value >> (8 * i)) & 0xff;
      hash_ *= 0x100000001b3ULL;
    }
  }
  void add(const std::vector<int64_t>& values) {
    add(uint64_t(values.size()));
    for (const int64_t v : values) add(uint64_t(v));
  }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
    return text;
  }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

constexpr uint64_t EDGE_ROWS = 4096;

}  // namespace

DatasetIdentity dataset_identity(const std::string& path) { return dataset_identity(DatasetReader(path)); }

DatasetIdentity dataset_identity(const DatasetReader& reader) {
  const std::string& path = reader.path();
  DatasetIdentity id;
  std::error_code ec;
  const auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  id.path = ec ? path : resolved.string();
  id.positions = reader.num_positions();
  id.games = reader.num_games();
  Fnv1a hash;
  hash.add(id.positions);
  hash.add(id.games);
  for (const char* column : {GAME_NUM_ROWS, GAME_PLIES, GAME_SOURCE_NUMBER, GAME_SOURCE_LINE, GAME_RESULT})
    hash.add(reader.read_game_column(column));
  const uint64_t first = std::min(EDGE_ROWS, id.positions);
  hash.add(reader.read_row_column(PLAYED_MOVE, 0, first));
  const uint64_t last = std::min(EDGE_ROWS, id.positions - first);
  hash.add(reader.read_row_column(PLAYED_MOVE, id.positions - last, last));
  id.fingerprint = hash.hex();
  return id;
}

}  // namespace legalnet::data
