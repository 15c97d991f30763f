// Reads a legalnet dataset, after checking that it is one: format name and version, every
// dataset present with the expected shape and type. Serves large contiguous slices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chess/position.h"
#include "data/row_block.h"

namespace legalnet::data {

class DatasetReader {
 public:
  // Opens and validates; throws legalnet::Error naming the file and what is wrong.
  explicit DatasetReader(const std::string& path);
  // How many readers this process has opened (a test checks that train opens each file once).
  static uint64_t opened();
  ~DatasetReader();
  DatasetReader(DatasetReader&&) noexcept;

  const std::string& path() const;
  uint64_t num_positions() const;
  uint64_t num_games() const;
  // Whether its row columns are virtual datasets over shards (merge without --copy).
  bool joined() const;
  // The shard files a joined dataset reads (paths resolved from its folder); empty if none.
  const std::vector<std::string>& shards() const;

  // Rows [start, start + count): 448 int8 per row, or 4096 uint8 per row.
  void read_positions(uint64_t start, uint64_t count, int8_t* out) const;
  void read_legal_moves(uint64_t start, uint64_t count, uint8_t* out) const;
  // A per-row column (dataset_format.h names) for rows [start, start + count), as int64.
  std::vector<int64_t> read_row_column(const char* name, uint64_t start, uint64_t count) const;
  // Rows [start, start + count) as the row decoder takes them (data/row_block.h).
  RowBlock read_block(uint64_t start, uint64_t count) const;
  // The exact positions of rows [start, start + count) (RowBlock::position: checked).
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

// Rows read a slice at a time: 16,384 rows, a multiple of the 256-row chunks, so that a slice
// inflates whole chunks and holds a few MB whatever the file's size.
constexpr uint64_t ROW_SLICE = 16384;

// One slice of rows [start, start + count) of `reader`; game_offset is the number of games of
// the files before it, which turns the slice's game column into an index over all the files.
struct RowSlice {
  const DatasetReader& reader;
  uint64_t start, count;
  int64_t game_offset;
};

// Calls fn(RowSlice) for the rows of `reader`, ROW_SLICE rows at a time, while fn returns
// true; returns whether it went to the end.
template <class Fn>
bool for_each_row_slice(const DatasetReader& reader, int64_t game_offset, Fn& fn) {
  for (uint64_t start = 0; start < reader.num_positions(); start += ROW_SLICE)
    if (!fn(RowSlice{reader, start, std::min(ROW_SLICE, reader.num_positions() - start), game_offset})) return false;
  return true;
}

// Opens each of `paths` in order (each validated as DatasetReader does).
std::vector<DatasetReader> open_readers(const std::vector<std::string>& paths);

// Calls fn(RowSlice) for the rows of every file in order, while fn returns true: the one loop
// over dataset files that train's loaders and evaluate share. Each file is opened once.
template <class Fn>
void for_each_row_slice(const std::vector<DatasetReader>& readers, Fn fn) {
  int64_t game_offset = 0;
  for (const DatasetReader& reader : readers) {
    if (!for_each_row_slice(reader, game_offset, fn)) return;
    game_offset += int64_t(reader.num_games());
  }
}
template <class Fn>
void for_each_row_slice(const std::vector<std::string>& paths, Fn fn) {
  int64_t game_offset = 0;
  for (const auto& path : paths) {
    const DatasetReader reader(path);
    if (!for_each_row_slice(reader, game_offset, fn)) return;
    game_offset += int64_t(reader.num_games());
  }
}

}  // namespace legalnet::data
