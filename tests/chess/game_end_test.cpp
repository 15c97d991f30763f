#include <gtest/gtest.h>

#include "chess/game_end.h"
#include "chess/notation.h"

namespace legalnet::chess {
namespace {

Termination ending(const char* fen) { return termination(Position(fen)); }

void play(Position& pos, std::initializer_list<const char*> sans) {
  for (const char* san : sans) pos.do_move(parse_san(pos, san));
}

TEST(GameEnd, CheckmateAndStalemate) {
  Position pos;
  play(pos, {"f3", "e5", "g4", "Qh4#"});
  EXPECT_EQ(termination(pos), Termination::CHECKMATE);
  EXPECT_EQ(result_string(Termination::CHECKMATE, pos.side_to_move()), "0-1");
  EXPECT_EQ(ending("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"), Termination::STALEMATE);
  EXPECT_EQ(ending("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"), Termination::NONE);
}

TEST(GameEnd, InsufficientMaterialFollowsPythonChess) {
  EXPECT_EQ(ending("8/8/4k3/8/8/3K4/8/8 w - - 0 1"), Termination::INSUFFICIENT_MATERIAL);   // K v K
  EXPECT_EQ(ending("8/8/4k3/8/8/3KN3/8/8 w - - 0 1"), Termination::INSUFFICIENT_MATERIAL);  // KN v K
  EXPECT_EQ(ending("8/8/4k3/8/8/3KB3/8/8 w - - 0 1"), Termination::INSUFFICIENT_MATERIAL);  // KB v K
  // Bishops all on one square colour, on both sides.
  EXPECT_EQ(ending("8/8/4kb2/8/8/3KB3/8/8 w - - 0 1"), Termination::INSUFFICIENT_MATERIAL);
  EXPECT_EQ(ending("8/8/4k1b1/8/8/3KB3/8/8 w - - 0 1"), Termination::NONE);  // opposite colours
  EXPECT_EQ(ending("8/8/4kn2/8/8/3KN3/8/8 w - - 0 1"), Termination::NONE);   // KN v KN: selfmate
  EXPECT_EQ(ending("8/8/4k3/8/8/3KNN2/8/8 w - - 0 1"), Termination::NONE);   // KNN v K
  EXPECT_EQ(ending("8/8/4kq2/8/8/3KN3/8/8 w - - 0 1"), Termination::NONE);   // queen can mate
  EXPECT_EQ(ending("8/8/4k3/8/8/3KB3/5p2/8 w - - 0 1"), Termination::NONE);  // a pawn
  // Insufficient material outranks stalemate, as in python-chess.
  EXPECT_EQ(ending("k7/2K5/1B6/8/8/8/8/8 b - - 0 1"), Termination::INSUFFICIENT_MATERIAL);
  EXPECT_TRUE(has_insufficient_material(Position("8/8/4k3/8/8/3K4/8/7R w - - 0 1"), BLACK));
  EXPECT_FALSE(has_insufficient_material(Position("8/8/4k3/8/8/3K4/8/7R w - - 0 1"), WHITE));
}

TEST(GameEnd, SeventyFiveMoveRuleUnlessMate) {
  EXPECT_EQ(ending("8/8/4k3/8/8/3K4/8/7R w - - 149 120"), Termination::NONE);
  EXPECT_EQ(ending("8/8/4k3/8/8/3K4/8/7R w - - 150 120"), Termination::SEVENTYFIVE_MOVES);
  EXPECT_EQ(ending("R6k/8/6K1/8/8/8/8/8 b - - 150 120"), Termination::CHECKMATE);
  EXPECT_TRUE(can_claim_fifty_moves(Position("8/8/4k3/8/8/3K4/8/7R w - - 100 120")));
}

TEST(GameEnd, FivefoldRepetition) {
  Position pos;
  for (int cycle = 1; cycle <= 4; ++cycle) {
    play(pos, {"Nf3", "Nf6", "Ng1", "Ng8"});
    EXPECT_EQ(repetition_count(pos), cycle + 1);
    EXPECT_EQ(is_threefold_repetition(pos), cycle >= 2);
    EXPECT_EQ(termination(pos), cycle == 4 ? Termination::FIVEFOLD_REPETITION : Termination::NONE);
  }
}

TEST(GameEnd, RepetitionComparesCastlingRightsAndOnlyLegalEnPassant) {
  // After the kings step out and back, castling rights differ: no repetition.
  Position pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  play(pos, {"Ke2", "Ke7", "Ke1", "Ke8", "Ke2", "Ke7", "Ke1", "Ke8"});
  EXPECT_EQ(repetition_count(pos), 2);  // the first "Ke1 Ke8" position, not the start
  // 1. e4 with no black pawn able to take: its en-passant square does not count, so the
  // position repeats after knights go out and back.
  Position e4;
  play(e4, {"e4", "Nf6", "Nf3", "Ng8", "Ng1", "Nf6", "Nf3", "Ng8", "Ng1"});
  EXPECT_EQ(repetition_count(e4), 3);
}

}  // namespace
}  // namespace legalnet::chess
