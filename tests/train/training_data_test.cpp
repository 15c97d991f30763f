// train/training_data: the compact rows training reads.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "chess/movegen.h"
#include "data/dataset_reader.h"
#include "support/helpers.h"
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
  const RowWeights w = test::weights_of(4, 3, 2);
  EXPECT_EQ(w.copies(rows, 0), 4);
  EXPECT_EQ(w.copies(rows, 1), 3);
  EXPECT_EQ(w.copies(rows, 2), 2);
  EXPECT_EQ(w.copies(rows, 3), 1);
  EXPECT_EQ(w.copies(rows, 4), 4);
  EXPECT_FALSE(RowWeights{}.repeats_any());
  EXPECT_TRUE(test::weights_of(1, 1, 2).repeats_any());
  EXPECT_TRUE(RowWeights{}.raise(SIT_NO_LEGAL_MOVE, 2).repeats_any());
  EXPECT_EQ(RowWeights{}.raise(SIT_IN_CHECK, 3).raise(SIT_IN_CHECK, 2).weight[SIT_IN_CHECK], 3);  // the larger wins
}

// --situation-weight's text: any situation by its name, each weight 1..100; what is wrong is
// said in one line (an unknown name with the names there are).
TEST(TrainingData, RowWeightsReadEverySituationByName) {
  EXPECT_EQ(RowWeights::parse(""), RowWeights{});
  for (const chess::SituationSpec& s : chess::SITUATIONS) {
    const RowWeights w = RowWeights::parse(std::string(s.name) + "=7");
    for (int t = 0; t < chess::SITUATION_NB; ++t) EXPECT_EQ(w.weight[size_t(t)], t == s.value ? 7 : 1) << s.name;
  }
  const RowWeights w = RowWeights::parse("many_queens=4,in_check=100,promotion=1");
  EXPECT_EQ(w, RowWeights{}.raise(chess::SIT_MANY_QUEENS, 4).raise(chess::SIT_IN_CHECK, 100));
  EXPECT_EQ(test::error_of([] { RowWeights::parse("queens=4"); }),
            "unknown situation 'queens' (expected with_legal_move | in_check | double_check | pinned_piece | "
            "en_passant | castling | castling_refused | promotion | many_queens | few_moves | no_legal_move)");
  for (const char* bad : {"in_check=0", "in_check=101", "in_check=2.5", "in_check=", "in_check=-3", "in_check= 2"})
    EXPECT_EQ(test::error_of([&] { RowWeights::parse(bad); }).find("in_check: the weight '"), 0u) << bad;
  EXPECT_EQ(test::error_of([] { RowWeights::parse("in_check=101"); }),
            "in_check: the weight '101' is not an integer in 1..100");
  EXPECT_EQ(test::error_of([] { RowWeights::parse("in_check=2,in_check=3"); }), "in_check is named twice");
  for (const char* bad : {"in_check", "in_check=2,", ",in_check=2", "in_check=2,,promotion=2"})
    EXPECT_NE(test::error_of([&] { RowWeights::parse(bad); }).find("is not NAME=W (e.g. many_queens=4"),
              std::string::npos)
        << bad;
}

}  // namespace
}  // namespace legalnet::train
