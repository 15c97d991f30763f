// Positions encoded for the dataset but not yet written: what tensorize's workers hand to the
// writer. Legal moves travel as index lists (about 30 per row) and become 4096-byte masks only
// inside the writer's compression tasks.
#pragma once

#include <cstdint>
#include <vector>

#include "chess/movegen.h"
#include "data/column_values.h"

namespace legalnet::data {

struct EncodedRows {
  // The row columns of the format (ROW_COLUMNS) in their stored types, but for two: legal
  // moves travel as index lists (below), and the game number is the writer's to give.
  RowColumnSet columns{ROW_COLUMNS};
  std::vector<uint16_t> legal;      // legal move indices of all rows, concatenated
  std::vector<uint32_t> legal_end;  // one past each row's last index in `legal`
  std::vector<uint64_t> key;        // Zobrist key, for --dedupe

  size_t size() const { return key.size(); }
  void clear();
  // Keeps the first `rows` rows.
  void truncate(size_t rows);
  // Appends pos with its legal moves and the move played from it (none for a final position).
  void add(const chess::Position& pos, const chess::MoveList& legal, chess::Move played, int ply_number);
};

// Where a game came from and how it ended, one row of the dataset's games table.
struct GameInfo {
  int32_t plies = 0;
  int32_t source = 0;       // index into the dataset's sources
  int64_t source_game = 0;  // 1-based game number in that file
  int64_t source_line = 0;
  int8_t result = -2;      // 1, 0, -1, or -2 for unknown
  int8_t termination = 0;  // chess::Termination of the final position
};

}  // namespace legalnet::data
