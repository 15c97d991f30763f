#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "chess/king_safety.h"
#include "chess/movegen.h"
#include "eval/situations.h"
#include "games/game_start.h"
#include "games/material_class.h"
#include "games/placement.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet {
namespace {

using namespace chess;

// Every legal position of a class, white to move, against python-chess's is_valid() over every
// placement of the pieces (tests/games/material_classes.py, the oracle: about two minutes).
TEST(MaterialClass, EveryLegalPositionOfAClassOnceAsPythonChessCountsThem) {
  const auto count = [](const char* spec) {
    const std::vector<MaterialClass> classes = material_classes(spec);
    EXPECT_EQ(classes.size(), 1u);
    std::set<std::string> fens;
    const uint64_t n = for_each_position(classes[0], [&](const Position& pos) {
      EXPECT_EQ(pos.side_to_move(), WHITE);
      fens.insert(pos.fen());
    });
    EXPECT_EQ(fens.size(), n) << spec;
    return n;
  };
  EXPECT_EQ(count("Q"), 144508u);
  EXPECT_EQ(count("P"), 163328u);
  EXPECT_EQ(count("n"), 223944u);
  EXPECT_EQ(count("none"), 3612u);  // 64 x 63 squares less the kings side by side (420)
}

TEST(MaterialClass, SpecsNameEachClassOnceAndBadOnesAreRefusedByName) {
  std::vector<std::string> names;
  for (const auto& m : material_classes("?")) names.push_back(m.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"KPvK", "KNvK", "KBvK", "KRvK", "KQvK", "KvKP", "KvKN", "KvKB", "KvKR", "KvKQ"}));
  EXPECT_EQ(material_classes("??").size(), 55u);  // pairs of the ten, with repetition
  EXPECT_EQ(material_classes("?q").size(), 10u);
  EXPECT_EQ(material_classes("Rn")[0].name, "KRvKN");
  EXPECT_EQ(test::error_of([] { material_classes("X"); }),
            "--material 'X': 'X' is not a piece letter (PNBRQ pnbrq, or ?)");
  EXPECT_EQ(test::error_of([] { material_classes("QQQ"); }), "--material 'QQQ': at most 2 pieces beside the kings");
  EXPECT_NE(test::error_of([] { material_classes(""); }), "");
}

TEST(MaterialClass, SamplesAreLegalSeededAndVaried) {
  const MaterialClass m = material_classes("Qr")[0];
  std::set<std::string> fens;
  for (uint64_t i = 0; i < 200; ++i) {
    const Position pos = sample_position(m, 3, i);
    EXPECT_EQ(pos.fen(), sample_position(m, 3, i).fen());
    EXPECT_EQ(popcount(pos.pieces()), 4);
    EXPECT_EQ(Position(pos.fen()).fen(), pos.fen());
    fens.insert(pos.fen());
  }
  EXPECT_GT(fens.size(), 190u);
}

TEST(RandomPlacement, SameStreamSamePosition) {
  for (uint64_t i = 0; i < 50; ++i) {
    GameRng a(7, i), b(7, i);
    EXPECT_EQ(random_placement(a).fen(), random_placement(b).fen());
  }
}

// The drawn positions are legal (the FEN reads back as itself), varied, and reach the situations
// random games from the start rarely do, in the proportions placement.h promises.
TEST(RandomPlacement, LegalVariedAndCoveringTheRules) {
  constexpr int N = 4000;
  std::set<std::string> fens;
  int check = 0, double_check = 0, ep = 0, castling_right = 0, castling = 0, refused = 0, queens3 = 0, none = 0;
  for (int i = 0; i < N; ++i) {
    GameRng rng(1, uint64_t(i));
    const Position pos = random_placement(rng);
    const std::string fen = pos.fen();
    ASSERT_EQ(Position(fen).fen(), fen);
    fens.insert(fen);
    ASSERT_LE(popcount(pos.checkers()), 2) << fen;
    for (Color c : {WHITE, BLACK}) {
      ASSERT_LE(popcount(pos.pieces(c)), 16) << fen;
      ASSERT_LE(popcount(pos.pieces(c, PAWN)), 8) << fen;
    }
    const MoveList legal(pos);
    const uint32_t s = eval::situations_of(pos, legal);
    check += pos.in_check();
    double_check += bool(s & (1u << eval::SIT_DOUBLE_CHECK));
    ep += pos.ep_square() != SQ_NONE;
    castling_right += pos.castling_rights() != 0;
    castling += bool(s & (1u << eval::SIT_CASTLING));
    refused += bool(s & (1u << eval::SIT_CASTLING_REFUSED));
    queens3 += bool(s & (1u << eval::SIT_MANY_QUEENS));
    none += bool(s & (1u << eval::SIT_NO_LEGAL_MOVE));
  }
  EXPECT_GT(fens.size(), size_t(N * 99 / 100));
  EXPECT_GT(check, N / 10);
  EXPECT_GT(double_check, 5);
  EXPECT_GT(ep, N / 100);
  EXPECT_GT(castling_right, N / 5);
  EXPECT_GT(castling, N / 20);
  EXPECT_GT(refused, 10);
  EXPECT_GT(queens3, 20);
  EXPECT_GT(none, 5);
}

TEST(Situations, OfKnownPositions) {
  auto of = [](const char* fen) {
    const Position pos(fen);
    return eval::situations_of(pos, MoveList(pos));
  };
  auto has = [](uint32_t s, eval::Situation x) { return bool(s & (1u << x)); };
  // White may castle king side; queen side is refused: d1 is attacked by the rook on d8.
  const uint32_t refused = of("3rk3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
  EXPECT_TRUE(has(refused, eval::SIT_CASTLING));
  EXPECT_TRUE(has(refused, eval::SIT_CASTLING_REFUSED));
  // Blocked by a piece is not "refused by an attacked square".
  EXPECT_FALSE(has(of("4k3/8/8/8/8/8/8/RN2K3 w Q - 0 1"), eval::SIT_CASTLING_REFUSED));
  // Double check from a knight and a rook.
  const uint32_t dbl = of("4k3/8/3N4/8/8/8/8/4R1K1 b - - 0 1");
  EXPECT_TRUE(has(dbl, eval::SIT_IN_CHECK));
  EXPECT_TRUE(has(dbl, eval::SIT_DOUBLE_CHECK));
  // Stalemate: no legal move, and not "with a legal move".
  const uint32_t stale = of("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
  EXPECT_TRUE(has(stale, eval::SIT_NO_LEGAL_MOVE));
  EXPECT_FALSE(has(stale, eval::WITH_LEGAL_MOVE));
  // En passant and a pinned piece.
  EXPECT_TRUE(has(of("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"), eval::SIT_EN_PASSANT));
  EXPECT_TRUE(has(of("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1"), eval::SIT_PINNED_PIECE));
  EXPECT_TRUE(has(of("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"), eval::SIT_PROMOTION));
  EXPECT_TRUE(has(of("QQQ1k3/8/8/8/8/8/8/4K3 b - - 0 1"), eval::SIT_MANY_QUEENS));
  // One to five legal moves: a lone king in the corner (3), beside a knight on h1 (3 + 2), not
  // with the knight on h2 (3 + 3), nor the stalemate's none, nor the start position's 20.
  EXPECT_TRUE(has(of("k7/8/8/8/8/8/8/4K3 b - - 0 1"), eval::SIT_FEW_MOVES));
  EXPECT_TRUE(has(of("k7/8/8/8/8/8/8/4K2n b - - 0 1"), eval::SIT_FEW_MOVES));
  EXPECT_FALSE(has(of("k7/8/8/8/8/8/7n/4K3 b - - 0 1"), eval::SIT_FEW_MOVES));
  EXPECT_FALSE(has(stale, eval::SIT_FEW_MOVES));
  EXPECT_FALSE(has(of("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"), eval::SIT_FEW_MOVES));
}

// The card: an all-correct output is exact everywhere with no illegal mass or pick; outputs on
// illegal moves are counted in the situations of their position.
TEST(Situations, CardCountsExactSetsMassAndPicks) {
  const Position pos("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
  const MoveList legal(pos);
  std::vector<float> probs(4096, 0.0f);
  for (Move m : legal) probs[size_t(m.from() * 64 + m.to())] = 0.9f;
  eval::SituationCard card;
  card.add(pos, legal, probs.data(), 0.5f, 0.3);
  const auto& all = card.rows[eval::WITH_LEGAL_MOVE];
  EXPECT_EQ(all.positions, 1u);
  EXPECT_EQ(all.exact_sets, 1u);
  EXPECT_DOUBLE_EQ(all.mean_illegal_mass(), 0.0);
  EXPECT_EQ(all.sampled_illegal.count, 0u);
  EXPECT_EQ(card.rows[eval::SIT_CASTLING].positions, 1u);
  EXPECT_EQ(card.rows[eval::SIT_IN_CHECK].positions, 0u);
  probs[0] = 1.0f;  // a1a1: never a move; all the mass of the draw at 0.0 goes to it
  card.add(pos, legal, probs.data(), 0.5f, 0.0);
  EXPECT_EQ(all.positions, 2u);
  EXPECT_EQ(all.exact_sets, 1u);
  EXPECT_GT(all.mean_illegal_mass(), 0.0);
  EXPECT_EQ(all.sampled_illegal.count, 1u);
  EXPECT_EQ(all.sampled_illegal.total, 2u);
}

TEST(GameStarts, RandomPlacementAndList) {
  GameRng rng(3, 0);
  EXPECT_EQ(GameStarts("random", "").position(0, rng).fen(), std::string(START_FEN));
  EXPECT_FALSE(GameStarts("random", "").set_up());
  EXPECT_TRUE(GameStarts("placement", "").set_up());
  GameRng a(3, 9), b(3, 9);
  EXPECT_EQ(GameStarts("placement", "").position(9, a).fen(), random_placement(b).fen());
  EXPECT_THROW(GameStarts("placement", "8/8/8/8/8/8/8/K1k5 w - - 0 1"), Error);
  EXPECT_THROW(GameStarts("/nonexistent.fen", ""), Error);
}

// --start edited: a random game's position after 1-8 legal edits: legal (the setup's checks and
// python-chess's checker rules), the same from the same stream, and varied.
TEST(GameStarts, EditedStartsAreLegalSeededAndVaried) {
  const GameStarts edited("edited", "");
  EXPECT_TRUE(edited.set_up());
  EXPECT_TRUE(GameStarts::is_keyword("edited"));
  EXPECT_FALSE(GameStarts::is_keyword("edited.fen"));
  std::set<std::string> fens;
  for (uint64_t i = 0; i < 200; ++i) {
    GameRng a(5, i), b(5, i);
    const Position pos = edited.position(i, a);
    EXPECT_EQ(pos.fen(), edited.position(i, b).fen());
    EXPECT_EQ(Position(pos.fen()).fen(), pos.fen());
    EXPECT_TRUE(checkers_possible(pos)) << pos.fen();
    fens.insert(pos.fen());
  }
  EXPECT_GT(fens.size(), 195u);
}

// --start lopsided: a king and at most three pieces against 5-15, material a game can reach (no
// more promoted pieces than missing pawns), legal as the setup and python-chess's checker rules
// have it, the weak side to move in about three draws of four; the same from the same stream.
TEST(GameStarts, LopsidedStartsAreLegalSeededAndLopsided) {
  const GameStarts lopsided("lopsided", "");
  EXPECT_TRUE(lopsided.set_up());
  EXPECT_TRUE(GameStarts::is_keyword("lopsided"));
  constexpr int N = 2000;
  std::set<std::string> fens;
  int weak_to_move = 0, lone_king = 0, in_check = 0;
  for (uint64_t i = 0; i < N; ++i) {
    GameRng a(6, i), b(6, i);
    const Position pos = lopsided.position(i, a);
    const std::string fen = pos.fen();
    ASSERT_EQ(random_lopsided_position(b).fen(), fen);
    ASSERT_EQ(Position(fen).fen(), fen);  // read back: the setup refuses unreachable material
    ASSERT_TRUE(checkers_possible(pos)) << fen;
    ASSERT_TRUE(pos.castling_rights() == 0) << fen;
    ASSERT_EQ(pos.ep_square(), SQ_NONE) << fen;
    ASSERT_EQ(pos.pieces(PAWN) & (rank_bb(0) | rank_bb(7)), 0u) << fen;
    const int white = popcount(pos.pieces(WHITE)) - 1, black = popcount(pos.pieces(BLACK)) - 1;
    const Color weak = white < black ? WHITE : BLACK;
    const int few = std::min(white, black), many = std::max(white, black);
    ASSERT_LE(few, 3) << fen;
    ASSERT_GE(many, 5) << fen;
    ASSERT_LE(many, 15) << fen;
    weak_to_move += pos.side_to_move() == weak;
    lone_king += few == 0;
    in_check += pos.in_check();
    fens.insert(fen);
  }
  EXPECT_GT(fens.size(), size_t(N * 99 / 100));
  EXPECT_GT(weak_to_move, N * 70 / 100);
  EXPECT_LT(weak_to_move, N * 80 / 100);
  EXPECT_GT(lone_king, N / 4);  // a third of the draws
  EXPECT_LT(lone_king, N * 42 / 100);
  EXPECT_GT(in_check, N / 10);
}

// --start sparse: the two kings and one to three more pieces, legal, seeded and varied.
TEST(GameStarts, SparseStartsAreLegalSeededAndFew) {
  const GameStarts sparse("sparse", "");
  std::set<std::string> fens;
  std::set<int> counts;
  for (uint64_t i = 0; i < 500; ++i) {
    GameRng a(8, i), b(8, i);
    const Position pos = sparse.position(i, a);
    ASSERT_EQ(random_sparse_position(b).fen(), pos.fen());
    ASSERT_EQ(Position(pos.fen()).fen(), pos.fen());
    ASSERT_TRUE(checkers_possible(pos)) << pos.fen();
    counts.insert(popcount(pos.pieces()));
    fens.insert(pos.fen());
  }
  EXPECT_EQ(counts, (std::set<int>{3, 4, 5}));
  EXPECT_GT(fens.size(), 490u);
}

}  // namespace
}  // namespace legalnet
