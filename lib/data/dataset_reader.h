// Reads a legalnet dataset, after checking that it is one: format name and version, every
// dataset present with the expected shape and type. Serves large contiguous slices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chess/position.h"

namespace legalnet::data {

class DatasetReader {
 public:
  // Opens and validates; throws legalnet::Error naming the file and what is wrong.
  explicit DatasetReader(const std::string& path);
  ~DatasetReader();
  DatasetReader(DatasetReader&&) noexcept;

  const std::string& path() const;
  uint64_t num_positions() const;
  uint64_t num_games() const;
  // Whether its row columns are virtual datasets over shards (merge without --copy).
  bool joined() const;

  // Rows [start, start + count): 448 int8 per row, or 4096 uint8 per row.
  void read_positions(uint64_t start, uint64_t count, int8_t* out) const;
  void read_legal_moves(uint64_t start, uint64_t count, uint8_t* out) const;
  // A per-row column (dataset_format.h names) for rows [start, start + count), as int64.
  std::vector<int64_t> read_row_column(const char* name, uint64_t start, uint64_t count) const;
  // The exact positions of rows [start, start + count): planes plus castling rights,
  // en-passant square and counters.
  std::vector<chess::Position> read_board_positions(uint64_t start, uint64_t count) const;
  // A whole column of the games table, as int64.
  std::vector<int64_t> read_game_column(const char* name) const;

  std::string string_attribute(const char* name) const;
  std::vector<std::string> string_list_attribute(const char* name) const;
  int64_t int_attribute(const char* name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace legalnet::data
