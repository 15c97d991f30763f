// The values of dataset columns held in memory in their stored element types, one buffer per
// entry of a column table (dataset_format.h): what tensorize's workers hand to the writer and
// what the writer hands to HDF5, byte for byte. Every column goes through the same code; a
// column added to the table is carried without a member of its own.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "data/dataset_format.h"

namespace legalnet::data {

class ColumnValues {
 public:
  ColumnValues() = default;
  explicit ColumnValues(const ColumnSpec& spec) : spec_(&spec), row_bytes_(size_t(spec.row_bytes())) {}

  const ColumnSpec& spec() const { return *spec_; }
  size_t rows() const { return bytes_.size() / row_bytes_; }
  bool empty() const { return bytes_.empty(); }
  const unsigned char* data() const { return bytes_.data(); }
  const unsigned char* row(size_t r) const { return bytes_.data() + r * row_bytes_; }

  // Appends one value of a one-value-per-row column, in the column's element type.
  void push(int64_t value) {
    switch (spec_->element) {
      case Element::INT8: return put(int8_t(value));
      case Element::UINT8: return put(uint8_t(value));
      case Element::INT16: return put(int16_t(value));
      case Element::INT32: return put(int32_t(value));
      case Element::INT64: return put(value);
    }
  }
  // Appends a row of uninitialised values and returns it (a column with a tail: positions).
  unsigned char* add_row() {
    bytes_.resize(bytes_.size() + row_bytes_);
    return bytes_.data() + bytes_.size() - row_bytes_;
  }
  // Appends row r of `from`, a buffer of the same column.
  void append_row(const ColumnValues& from, size_t r) { bytes_.insert(bytes_.end(), from.row(r), from.row(r + 1)); }
  void resize(size_t rows) { bytes_.resize(rows * row_bytes_); }
  void clear() { bytes_.clear(); }

 private:
  template <class T>
  void put(T value) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof value);
    std::memcpy(bytes_.data() + at, &value, sizeof value);
  }

  const ColumnSpec* spec_ = nullptr;
  size_t row_bytes_ = 1;
  std::vector<unsigned char> bytes_;
};

// One buffer per entry of a column table (ROW_COLUMNS or GAME_COLUMNS), indexed by its enum.
template <class Id, size_t N>
class ColumnSet {
 public:
  explicit ColumnSet(const ColumnSpec (&table)[N]) {
    for (size_t i = 0; i < N; ++i) columns_[i] = ColumnValues(table[i]);
  }
  ColumnValues& operator[](Id id) { return columns_[size_t(id)]; }
  const ColumnValues& operator[](Id id) const { return columns_[size_t(id)]; }
  auto begin() { return columns_.begin(); }
  auto end() { return columns_.end(); }
  auto begin() const { return columns_.begin(); }
  auto end() const { return columns_.end(); }

 private:
  std::array<ColumnValues, N> columns_;
};

using RowColumnSet = ColumnSet<RowColumn, ROW_COLUMN_COUNT>;
using GameColumnSet = ColumnSet<GameColumn, GAME_COLUMN_COUNT>;

}  // namespace legalnet::data
