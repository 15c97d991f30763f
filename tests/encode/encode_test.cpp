#include "encode/encode.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "chess/notation.h"
#include "encode/attack_planes.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet::encode {
namespace {

using chess::KING;
using chess::PAWN;
using chess::Position;
using chess::QUEEN;
using chess::ROOK;

TEST(Encode, PlanesRoundTripWithTheStateTheyDoNotShow) {
  for (const auto& fen : test::sample_fens(/*seed=*/3, 3000)) {
    const Position pos(fen);
    int8_t planes[POSITION_SIZE];
    encode_planes(pos, planes);
    const int ep = pos.ep_square() == chess::SQ_NONE ? -1 : int(pos.ep_square());
    const Position back =
        decode_position(planes, pos.castling_rights(), ep, pos.halfmove_clock(), pos.fullmove_number());
    ASSERT_EQ(back.fen(), fen);
  }
}

TEST(Encode, PlaneLayoutIsThePredecessors) {
  int8_t planes[POSITION_SIZE];
  encode_planes(Position("4k3/8/8/8/8/8/8/R3K3 b Q - 0 1"), planes);
  for (int s = 0; s < 64; ++s) EXPECT_EQ(planes[s], -1);  // black to move
  EXPECT_EQ(planes[ROOK * 64 + 0 * 8 + 0], 1);            // white rook a1: [plane 4, rank 0, file 0]
  EXPECT_EQ(planes[KING * 64 + 0 * 8 + 4], 1);            // white king e1
  EXPECT_EQ(planes[KING * 64 + 7 * 8 + 4], -1);           // black king e8
  int nonzero = 0;
  for (int i = 64; i < POSITION_SIZE; ++i) nonzero += planes[i] != 0;
  EXPECT_EQ(nonzero, 3);
}

TEST(Encode, MasksHoldExactlyTheLegalMoves) {
  for (const auto& fen : test::sample_fens(/*seed=*/4, 2000)) {
    const Position pos(fen);
    const chess::MoveList legal(pos);
    uint8_t mask[MOVE_INDICES];
    encode_legal_mask(legal, mask);
    std::set<int> expected;
    for (auto m : legal) expected.insert(move_index(m));
    std::set<int> got;
    for (int i = 0; i < MOVE_INDICES; ++i)
      if (mask[i]) got.insert(i);
    ASSERT_EQ(got, expected) << fen;
    for (int i : got) ASSERT_TRUE(index_is_geometric(i)) << fen << " " << i;
  }
}

TEST(Encode, PromotionCastlingAndEnPassantIndices) {
  const Position promo("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(move_index(chess::parse_uci(promo, "a7a8q")), 48 * 64 + 56);
  EXPECT_EQ(move_index(chess::parse_uci(promo, "a7a8n")), 48 * 64 + 56);  // the four share one index
  EXPECT_EQ(move_index(chess::parse_uci(promo, "a7b8r")), 48 * 64 + 57);
  uint8_t mask[MOVE_INDICES];
  encode_legal_mask(chess::MoveList(promo), mask);
  EXPECT_EQ(mask[48 * 64 + 56] + mask[48 * 64 + 57], 2);
  const Position castle("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1");
  EXPECT_EQ(move_index(chess::parse_uci(castle, "e8g8")), 60 * 64 + 62);
  EXPECT_EQ(move_index(chess::parse_uci(castle, "e8c8")), 60 * 64 + 58);
  const Position ep("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2");
  EXPECT_EQ(move_index(chess::parse_uci(ep, "e5d6")), 36 * 64 + 43);
  EXPECT_EQ(index_from(36 * 64 + 43), chess::SQ_E5);
  EXPECT_EQ(index_to(36 * 64 + 43), chess::SQ_D6);
}

TEST(Encode, OnlyQueenAndKnightGeometryCanBeLegal) {
  int geometric = 0;
  for (int i = 0; i < MOVE_INDICES; ++i) geometric += index_is_geometric(i);
  EXPECT_EQ(geometric, 1792);
  EXPECT_FALSE(index_is_geometric(0));            // a1a1
  EXPECT_TRUE(index_is_geometric(0 * 64 + 63));   // a1h8
  EXPECT_TRUE(index_is_geometric(1 * 64 + 18));   // b1c3
  EXPECT_FALSE(index_is_geometric(0 * 64 + 12));  // a1e2
}

TEST(Encode, DecodeRejectsPlanesThatAreNotAPosition) {
  int8_t planes[POSITION_SIZE];
  encode_planes(Position(), planes);
  planes[QUEEN * 64 + 0] = 1;  // a queen on a1, where the rook is
  EXPECT_NE(test::error_of([&] { decode_position(planes, 0, -1, 0, 1); }).find("a1"), std::string::npos);
  encode_planes(Position(), planes);
  planes[PAWN * 64 + 30] = 3;
  EXPECT_EQ(test::error_of([&] { decode_position(planes, 0, -1, 0, 1); }), "plane value 3 is not -1, 0 or +1");
}

}  // namespace
}  // namespace legalnet::encode

namespace legalnet::encode {
namespace {

// The attack planes agree with the move generator (itself checked by perft against Stockfish):
// a king step is legal exactly when its square is not attacked, a pinned piece moves only
// along its pin and a piece is pinned exactly when taking it away exposes the king, and in
// check every legal move of another piece lands on a check line.
TEST(AttackPlanes, AgreeWithTheMoveGenerator) {
  using namespace chess;
  int pinned_seen = 0, checks_seen = 0;
  for (const auto& fen : test::sample_fens(/*seed=*/31, 1500)) {
    const Position pos(fen);
    int8_t planes[POSITION_SIZE], squares[64], attacks[ATTACK_PLANES * PLANE_SIZE];
    encode_planes(pos, planes);
    square_codes(planes, squares);
    encode_attack_planes(squares, planes[0], attacks);
    const int8_t* attacked = attacks;
    const int8_t* pinned = attacks + PLANE_SIZE;
    const int8_t* check_lines = attacks + 2 * PLANE_SIZE;
    const Color us = pos.side_to_move();
    const Square king = pos.king_square(us);
    const MoveList legal(pos);
    SCOPED_TRACE(fen);

    for (Bitboard steps = king_attacks(king) & ~pos.pieces(us); steps;) {
      const Square to = pop_lsb(steps);
      EXPECT_EQ(legal.contains(Move(king, to)), attacked[to] == 0) << "king to " << int(to);
    }
    ASSERT_EQ(test::side_to_move_in_check(squares, planes[0]), pos.in_check());
    for (Bitboard ours = pos.pieces(us) & ~square_bb(king); ours;) {
      const Square s = pop_lsb(ours);
      if (pinned[s]) {
        ++pinned_seen;
        for (Move m : legal)
          if (m.from() == s) EXPECT_TRUE(line_bb(king, s) & square_bb(m.to())) << "pinned piece left its line";
      }
      if (!pos.in_check()) {
        int8_t without[64];
        std::memcpy(without, squares, 64);
        without[s] = 0;
        EXPECT_EQ(test::side_to_move_in_check(without, planes[0]), pinned[s] != 0) << "square " << int(s);
      }
    }
    int lines = 0;
    for (int s = 0; s < 64; ++s) lines += check_lines[s];
    EXPECT_EQ(lines > 0, pos.in_check());
    if (!pos.in_check()) continue;
    ++checks_seen;
    for (Bitboard c = pos.checkers(); c;) EXPECT_EQ(check_lines[pop_lsb(c)], 1);
    for (Move m : legal)
      if (m.from() != king && m.kind() != MoveKind::EN_PASSANT)
        EXPECT_EQ(check_lines[m.to()], 1) << "evasion off the lines";
  }
  EXPECT_GT(pinned_seen, 50);
  EXPECT_GT(checks_seen, 50);
}

}  // namespace
}  // namespace legalnet::encode
