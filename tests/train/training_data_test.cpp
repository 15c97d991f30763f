// train/training_data: the compact rows training reads.
#include <gtest/gtest.h>

#include <functional>
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

// Every row of the tiny dataset is in one of the situations of `mask` exactly where `expected`
// says of its position (the move generator's, read back from the dataset), and some rows are.
void expect_flag_where(uint32_t mask, const std::function<bool(const chess::Position&)>& expected) {
  const CompactPositions rows = first_rows(0);
  const data::DatasetReader reader(tiny_dataset());
  const auto positions = reader.read_board_positions(0, rows.size());
  size_t flagged = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const bool want = expected(positions[r]);
    ASSERT_EQ((rows.situations[r] & mask) != 0, want) << positions[r].fen();
    flagged += want;
  }
  EXPECT_GT(flagged, 0u);
}

// The rows flagged rare are those with a legal castling or en-passant move, by the move generator.
TEST(TrainingData, RareRowsAreThoseWithALegalCastlingOrEnPassantMove) {
  expect_flag_where(1u << chess::SIT_CASTLING | 1u << chess::SIT_EN_PASSANT, [](const chess::Position& pos) {
    bool rare = false;
    for (chess::Move m : chess::MoveList(pos))
      rare |= m.kind() == chess::MoveKind::CASTLING || m.kind() == chess::MoveKind::EN_PASSANT;
    return rare;
  });
}

// The rows flagged pinned are those where a piece of the side to move stands alone between its
// king and an opponent's slider, checked here by trying each piece off the board: it is pinned when
// the king, with the piece lifted, would be attacked by a slider that did not attack it before.
TEST(TrainingData, PinnedRowsAreThoseWithAPieceBetweenItsKingAndASlider) {
  expect_flag_where(1u << chess::SIT_PINNED_PIECE, [](const chess::Position& pos) {
    const chess::Color us = pos.side_to_move(), them = chess::Color(us ^ 1);
    const chess::Square king = pos.king_square(us);
    const chess::Bitboard diagonal = pos.pieces(them, chess::BISHOP, chess::QUEEN),
                          straight = pos.pieces(them, chess::ROOK, chess::QUEEN);
    auto sliders_on_king = [&](chess::Bitboard occupied) {
      return (chess::bishop_attacks(king, occupied) & diagonal) | (chess::rook_attacks(king, occupied) & straight);
    };
    const chess::Bitboard before = sliders_on_king(pos.pieces());
    for (chess::Bitboard ours = pos.pieces(us) & ~chess::square_bb(king); ours; ours &= ours - 1)
      if (sliders_on_king(pos.pieces() & ~(ours & (0 - ours))) & ~before) return true;
    return false;
  });
}

// A row counts as often as the largest of the weights it qualifies for.
TEST(TrainingData, RowWeightsTakeTheLargestThatApplies) {
  CompactPositions rows;
  using namespace chess;
  constexpr uint16_t CHECK = 1 << SIT_IN_CHECK, CASTLE = 1 << SIT_CASTLING, EP = 1 << SIT_EN_PASSANT,
                     PIN = 1 << SIT_PINNED_PIECE, OTHER = 1 << SIT_PROMOTION | 1 << WITH_LEGAL_MOVE;
  rows.situations = {CHECK | CASTLE, EP, PIN | OTHER, OTHER, CHECK | PIN};
  const RowWeights w{4, 3, 2};
  EXPECT_EQ(w.copies(rows, 0), 4);
  EXPECT_EQ(w.copies(rows, 1), 3);
  EXPECT_EQ(w.copies(rows, 2), 2);
  EXPECT_EQ(w.copies(rows, 3), 1);
  EXPECT_EQ(w.copies(rows, 4), 4);
  EXPECT_FALSE(RowWeights{}.repeats_any());
  EXPECT_TRUE((RowWeights{1, 1, 2}.repeats_any()));
}

}  // namespace
}  // namespace legalnet::train
