// What the dataset fuzzers do with a file: open it with the reader (which validates it) and,
// if accepted, read it through every accessor train, evaluate and merge use. Reads are capped
// so that one input costs milliseconds: the first and last rows of each column.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset_format.h"
#include "data/dataset_reader.h"

inline void read_dataset_everywhere(const std::string& path) {
  using namespace legalnet;
  constexpr uint64_t ROWS_READ = 64;
  constexpr uint64_t GAMES_READ = 4096;
  const data::DatasetReader reader(path);
  const uint64_t rows = reader.num_positions();
  for (const uint64_t start : {uint64_t(0), rows > ROWS_READ ? rows - ROWS_READ : uint64_t(0)}) {
    const uint64_t count = std::min(ROWS_READ, rows - start);
    if (count == 0) continue;
    std::vector<int8_t> planes(count * encode::POSITION_SIZE);
    reader.read_positions(start, count, planes.data());
    std::vector<uint8_t> moves(count * encode::MOVE_INDICES);
    reader.read_legal_moves(start, count, moves.data());
    for (const data::ColumnSpec& column : data::ROW_COLUMNS)
      if (column.tail_rank() == 0) reader.read_row_column(column.name, start, count);
  }
  if (reader.num_games() <= GAMES_READ)
    for (const data::ColumnSpec& column : data::GAME_COLUMNS) reader.read_game_column(column.name);
  reader.string_list_attribute("sources");
  reader.int_attribute("include_final");
  reader.int_attribute("dedupe");
  reader.string_attribute("tool_version");
  reader.shards();
  // Last: any row that is not a chess position ends it.
  reader.read_board_positions(0, std::min(ROWS_READ, rows));
}
