// train/training_data: the compact rows training reads.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "chess/movegen.h"
#include "data/dataset_reader.h"
#include "train/fixtures.h"
#include "train/training_data.h"

namespace legalnet::train {
namespace {

using test::first_rows;
using test::tiny_dataset;

// The rows flagged rare are those with a legal castling or en-passant move, by the move generator.
TEST(TrainingData, RareRowsAreThoseWithALegalCastlingOrEnPassantMove) {
  const CompactPositions rows = first_rows(0);
  const data::DatasetReader reader(tiny_dataset());
  const auto positions = reader.read_board_positions(0, rows.size());
  size_t rare = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    bool expected = false;
    for (chess::Move m : chess::MoveList(positions[r]))
      expected |= m.kind() == chess::MoveKind::CASTLING || m.kind() == chess::MoveKind::EN_PASSANT;
    ASSERT_EQ(bool(rows.rare[r]), expected) << positions[r].fen();
    rare += expected;
  }
  EXPECT_GT(rare, 0u);
  EXPECT_EQ(RowWeights({4, 3}).copies(true, true), 4);
  EXPECT_EQ(RowWeights({4, 3}).copies(false, true), 3);
  EXPECT_EQ(RowWeights({4, 3}).copies(false, false), 1);
}

}  // namespace
}  // namespace legalnet::train
