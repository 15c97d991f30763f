#include <gtest/gtest.h>

#include "chess/notation.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet::chess {
namespace {

TEST(San, EveryLegalMoveRoundTripsThroughSanAndUci) {
  for (const auto& fen : test::sample_fens(/*seed=*/11, 800)) {
    Position pos(fen);
    for (Move m : MoveList(pos)) {
      const std::string san = to_san(pos, m);
      ASSERT_EQ(parse_san(pos, san), m) << fen << " " << san;
      ASSERT_EQ(parse_uci(pos, to_uci(m)), m) << fen;
    }
    EXPECT_EQ(pos.fen(), fen);  // to_san restores the position
  }
}

std::string san_of(const std::string& fen, const std::string& uci) {
  Position pos(fen);
  return to_san(pos, parse_uci(pos, uci));
}

TEST(San, Disambiguation) {
  // Two knights on the same rank: by file. Two rooks on the same file: by rank.
  EXPECT_EQ(san_of("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "b1d2"), "Nbd2");
  EXPECT_EQ(san_of("4k3/R7/8/8/8/8/R7/4K3 w - - 0 1", "a2a4"), "R2a4");
  // Three queens: by file and rank together.
  EXPECT_EQ(san_of("7k/8/8/8/Q1Q5/8/Q7/4K3 w - - 0 1", "a4b3"), "Qa4b3");
  // A pinned second knight does not force disambiguation.
  EXPECT_EQ(san_of("4k3/8/8/8/8/8/8/rN2KN2 w - - 0 1", "f1d2"), "Nd2");
}

TEST(San, SuffixesPromotionsCastling) {
  EXPECT_EQ(san_of("rnbqkbnr/ppppp2p/5p2/6p1/4P3/8/PPPP1PPP/RNBQKBNR w KQkq g6 0 3", "d1h5"), "Qh5#");
  EXPECT_EQ(san_of("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "a1a8"), "Ra8+");
  EXPECT_EQ(san_of("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8n"), "axb8=N");
  EXPECT_EQ(san_of("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q"), "a8=Q+");
  EXPECT_EQ(san_of("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1g1"), "O-O");
  EXPECT_EQ(san_of("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1c1"), "O-O-O");
  EXPECT_EQ(san_of("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "e5d6"), "exd6");
}

TEST(San, LenientInput) {
  Position castle("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
  EXPECT_EQ(to_uci(parse_san(castle, "0-0")), "e1g1");
  EXPECT_EQ(to_uci(parse_san(castle, "O-O-O+")), "e1c1");
  EXPECT_EQ(to_uci(parse_san(castle, "Kg1")), "e1g1");
  Position promo("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(to_uci(parse_san(promo, "a8Q")), "a7a8q");
  EXPECT_EQ(to_uci(parse_san(promo, "a8=N")), "a7a8n");
  EXPECT_EQ(to_uci(parse_san(promo, "a8(R)")), "a7a8r");
  EXPECT_EQ(to_uci(parse_san(promo, "a8=Q")), "a7a8q");  // missing '+'
  Position start;
  EXPECT_EQ(to_uci(parse_san(start, "Ng1f3")), "g1f3");
  EXPECT_EQ(to_uci(parse_san(start, "e2e4")), "e2e4");
  EXPECT_EQ(to_uci(parse_san(start, "e4!?")), "e2e4");
  EXPECT_EQ(to_uci(parse_san(start, "Nf3?!")), "g1f3");
}

// Forms other readers accept in real files: UCI and long algebraic movetext, "e.p.".
TEST(San, UciLongAlgebraicAndEnPassantSuffix) {
  Position start;
  EXPECT_EQ(to_uci(parse_san(start, "g1f3")), "g1f3");  // a knight, named only by its square
  EXPECT_EQ(to_uci(parse_san(start, "Ng1-f3")), "g1f3");
  EXPECT_EQ(to_uci(parse_san(start, "e2-e4")), "e2e4");
  EXPECT_EQ(to_uci(parse_san(start, "Pe2e4")), "e2e4");
  Position castle("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
  EXPECT_EQ(to_uci(parse_san(castle, "e1g1")), "e1g1");
  EXPECT_EQ(parse_san(castle, "e1c1").kind(), MoveKind::CASTLING);
  Position promo("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(to_uci(parse_san(promo, "a7a8r")), "a7a8r");
  EXPECT_EQ(to_uci(parse_san(promo, "a7b8n")), "a7b8n");
  EXPECT_EQ(to_uci(parse_san(promo, "a7xb8=b")), "a7b8b");
  Position ep("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2");
  EXPECT_EQ(to_uci(parse_san(ep, "exd6e.p.")), "e5d6");
  EXPECT_EQ(to_uci(parse_san(ep, "exd6e.p.+")), "e5d6");
}

TEST(San, RejectsIllegalAmbiguousAndGarbage) {
  Position start;
  auto message = [&](const char* san) {
    try {
      parse_san(start, san);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("e5").find("move 'e5': illegal"), std::string::npos);
  EXPECT_NE(message("Nf6").find("illegal"), std::string::npos);
  EXPECT_NE(message("O-O").find("castling is illegal"), std::string::npos);
  EXPECT_NE(message("Zf3").find("not SAN"), std::string::npos);
  EXPECT_NE(message("").find("empty move"), std::string::npos);
  EXPECT_NE(message("e8=K").find("cannot promote to a king"), std::string::npos);
  EXPECT_EQ(message("K"), "move 'K': no destination square");  // a truncated move, not a promotion
  EXPECT_EQ(message("e8=X"), "move 'e8=X': 'X' is not a piece");
  EXPECT_NE(message("g1f4").find("move 'g1f4': illegal"), std::string::npos);
  Position knights("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1");
  EXPECT_NE(test::error_of([&] { parse_san(knights, "Nd2"); }).find("move 'Nd2': ambiguous"), std::string::npos);
  Position promo("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_EQ(test::error_of([&] { parse_san(promo, "a8"); }), "move 'a8': promotion piece missing");
  EXPECT_NE(test::error_of([&] { parse_uci(start, "e2e5"); }).find("move 'e2e5': illegal in"), std::string::npos);
  EXPECT_EQ(test::error_of([&] { parse_uci(start, "zz"); }), "move 'zz': not UCI notation");
  const Position promoting("8/4P3/8/8/8/8/k7/4K3 w - - 0 1");
  EXPECT_EQ(test::error_of([&] { parse_uci(promoting, "e7e8"); }),
            "move 'e7e8': a promotion names its piece in UCI (e7e8q, e7e8r, e7e8b or e7e8n)");
}

// Castling as UCI_Chess960 writes it, the king taking its own rook, names the castling move; a
// king move onto its rook where castling is not legal stays refused.
TEST(Notation, CastlingAsTheKingTakingItsRook) {
  const Position both("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  EXPECT_EQ(parse_uci(both, "e1h1"), parse_uci(both, "e1g1"));
  EXPECT_EQ(parse_uci(both, "e1a1"), parse_uci(both, "e1c1"));
  EXPECT_EQ(parse_uci(both, "e1h1").kind(), MoveKind::CASTLING);
  const Position black("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1");
  EXPECT_EQ(parse_uci(black, "e8a8"), parse_uci(black, "e8c8"));
  const Position no_rights("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1");
  EXPECT_NE(test::error_of([&] { parse_uci(no_rights, "e1h1"); }).find("illegal in"), std::string::npos);
}

TEST(Notation, CastlingDroppedNoteNamesTheRights) {
  EXPECT_EQ(castling_dropped_note("Kq"), "castling rights 'Kq' dropped (the king or rook is not on its square)");
}

}  // namespace
}  // namespace legalnet::chess
