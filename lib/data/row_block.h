// Rows of a dataset as stored, and the one row decoder: every reader of positions (train's
// loaders and stream, evaluate) turns a row into a position here, with one set of checks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "chess/position.h"
#include "data/dataset_format.h"

namespace legalnet::data {

// The columns a block holds besides the planes: what the decoder and the loaders read.
inline constexpr RowColumn BLOCK_COLUMNS[] = {RowColumn::GAME,           RowColumn::PLY,
                                              RowColumn::CASTLING,       RowColumn::EN_PASSANT,
                                              RowColumn::HALFMOVE_CLOCK, RowColumn::FULLMOVE_NUMBER};

// Rows [start, start + count) of one file: the planes (POSITION_SIZE per row) and the
// BLOCK_COLUMNS as int64 (the other columns left empty).
struct RowBlock {
  std::string path;
  uint64_t start = 0, count = 0;
  std::vector<int8_t> planes;
  std::array<std::vector<int64_t>, ROW_COLUMN_COUNT> columns;

  int64_t at(RowColumn column, size_t i) const { return columns[size_t(column)][i]; }
  const int8_t* planes_of(size_t i) const { return planes.data() + i * encode::POSITION_SIZE; }
  // Row i's position, checked before any value is used as an index: plane values -1, 0 or +1,
  // castling bits 0..15, an en-passant square -1..63, then the position itself (one piece a
  // square, and chess::Position::from_parts: kings, pawns, castling rights, en passant, the
  // side not to move in check). Throws legalnet::Error "<file>: row <n>: <what>".
  chess::Position position(size_t i) const;
};

}  // namespace legalnet::data
