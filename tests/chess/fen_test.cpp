#include <gtest/gtest.h>

#include "chess/movegen.h"
#include "support/helpers.h"
#include "util/error.h"
#include "util/rng.h"

namespace legalnet::chess {
namespace {

TEST(Fen, StartPosition) {
  const Position pos;
  EXPECT_EQ(pos.fen(), START_FEN);
  EXPECT_EQ(pos.side_to_move(), WHITE);
  EXPECT_EQ(pos.castling_rights(), ALL_CASTLING);
  EXPECT_EQ(pos.piece_on(SQ_E1), W_KING);
  EXPECT_EQ(pos.piece_on(SQ_D8), B_QUEEN);
  EXPECT_EQ(popcount(pos.pieces()), 32);
}

TEST(Fen, RoundTripsAndIncrementalKeysMatchFreshOnes) {
  // The incrementally updated Zobrist key must equal the key of the position parsed afresh.
  for (const auto& fen : test::sample_fens(/*seed=*/5, 3000)) {
    const Position pos(fen);
    EXPECT_EQ(pos.fen(), fen);
  }
  Position pos;
  legalnet::GameRng rng(9, 0);
  for (int ply = 0; ply < 400; ++ply) {
    const MoveList legal(pos);
    if (legal.empty()) break;
    pos.do_move(legal[int(rng.below(uint32_t(legal.size())))]);
    const Position fresh(pos.fen());
    ASSERT_EQ(fresh.key(), pos.key()) << pos.fen();
    ASSERT_EQ(fresh.checkers(), pos.checkers()) << pos.fen();
  }
}

TEST(Fen, CountersAreOptionalAndBlackToMoveCountsFullmoves) {
  EXPECT_EQ(Position("8/8/8/8/8/8/8/K1k5 b - -").fen(), "8/8/8/8/8/8/8/K1k5 b - - 0 1");
  const Position pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  EXPECT_EQ(pos.fullmove_number(), 1);
}

TEST(Fen, EnPassantSquareKeptOnlyWhenACaptureIsLegal) {
  // No black pawn can take on e3: the square is dropped, and the key is the same as without it.
  const Position a("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  const Position b("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  EXPECT_EQ(a.ep_square(), SQ_NONE);
  EXPECT_EQ(a.key(), b.key());
  const Position c("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  EXPECT_EQ(c.ep_square(), SQ_E3);
  EXPECT_EQ(c.fen(), "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
}

struct BadFen {
  const char* fen;
  const char* error;
};

const BadFen BAD_FENS[] = {
    {"", "FEN has 0 fields"},
    {"8/8/8/8/8/8/8/K1k5 w", "FEN has 2 fields"},
    {"8/8/8/8/8/8/8/K1k5 w - - 0 1 extra", "FEN has 7 fields"},
    {"rnbqkbnr/pppppppp/p7p/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "FEN field 1, rank 6: 9 squares"},
    {"rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "FEN field 1, rank 6: bad piece letter '9'"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1", "FEN field 1, rank 1: 7 squares"},
    {"rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "FEN field 1, rank 7: 9 squares"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "FEN field 1: 7 ranks, expected 8"},
    {"rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "FEN field 1: more than 8 ranks"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "FEN field 1, rank 1: bad piece letter 'X'"},
    {"rnbqqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "FEN field 1: 0 black kings, expected exactly one"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKKBNR w KQkq - 0 1", "FEN field 1: 2 white kings, expected exactly one"},
    {"rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQkq - 0 1", "pawn on the first or last rank"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "FEN field 2: side to move 'x'"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1", "FEN field 3: bad castling letter 'x'"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKq - 0 1", "FEN field 3: castling letter 'K' repeated"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "FEN field 3: castling right 'K'"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
     "FEN field 4: en-passant square 'e9' is not a square"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1", "FEN field 4: en-passant square e6 does not follow"},
    {"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1",
     "FEN field 4: en-passant square e6 does not follow"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "FEN field 5: halfmove clock 'x' is not a number"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 -3", "FEN field 6: fullmove number '-3' is not a number"},
    {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999999999 1", "FEN field 5: halfmove clock"},
    {"bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1",
     "FEN field 3: castling letter 'G' is Chess960's (Shredder-FEN), not standard chess"},
    {"QQQQQQQQ/QQQQQQQQ/8/8/8/8/8/4K2k w - - 0 1",
     "FEN field 1: white has 15 promoted pieces and 0 pawns: more than its 8 pawns could become"},
    {"4k3/8/8/8/8/8/NNNPPPPP/4KN2 w - - 0 1", ""},  // 4 knights, 5 pawns: 2 promoted, 3 missing
    {"4k3/8/8/8/8/p7/pppppppp/4K3 b - - 0 1", "FEN field 1: 9 black pawns, more than 8"},
    {"4k3/8/8/8/8/8/8/4K2R b - - 0 1", ""},  // legal: sanity check of the table itself
    {"4k2R/8/8/8/8/8/8/4K3 w - - 0 1", "FEN field 1: the side not to move is in check"},
};

TEST(Fen, EveryErrorPathGivesAPreciseMessage) {
  for (const auto& bad : BAD_FENS) {
    if (!*bad.error) {
      EXPECT_NO_THROW(Position(bad.fen));
      continue;
    }
    try {
      Position pos(bad.fen);
      ADD_FAILURE() << "accepted: " << bad.fen;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad.error), std::string::npos) << e.what() << "\n  expected: " << bad.error;
    }
  }
}

// Studies' FEN tags keep rights whose king or rook has moved; python-chess and chessops drop
// them, and so does the lenient reading (Stockfish's perft agrees with the cleaned FEN).
TEST(Fen, VoidCastlingRightsAreDroppedWhenAsked) {
  const char* fen = "r3k2r/8/8/8/8/8/8/R4K1R w KQkq - 0 1";  // the white king has left e1
  EXPECT_EQ(test::error_of([&] { Position{fen}; }),
            "FEN field 3: castling right 'K' but the king or rook is not on its square");
  std::string dropped;
  const Position pos(fen, &dropped);
  EXPECT_EQ(dropped, "KQ");
  EXPECT_EQ(pos.fen(), "r3k2r/8/8/8/8/8/8/R4K1R w kq - 0 1");
  dropped.clear();
  const Position clean("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", &dropped);
  EXPECT_EQ(dropped, "");
  EXPECT_EQ(clean.castling_rights(), 15);
}

// The most moves a position can have (218, Petrovic's): the material check accepts it, and a
// list sized for the material bound holds it.
TEST(Fen, TheFullestReachableMaterialIsAcceptedAndItsMovesFit) {
  const Position pos("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1");
  EXPECT_EQ(MoveList(pos).size(), 218);
  static_assert(MAX_MOVES >= 9 * 27 + 2 * 14 + 2 * 13 + 2 * 8 + 10);
}

// A dataset row is set up through from_parts, with the same checks as FEN text.
TEST(Fen, PartsWithMaterialAGameCannotReachAreRefused) {
  std::array<Piece, SQUARE_NB> board{};
  for (int s = 0; s < 48; ++s) board[size_t(s)] = W_QUEEN;
  board[SQ_E8] = B_KING;
  board[SQ_A8] = W_KING;
  board[SQ_H8] = NO_PIECE;
  EXPECT_EQ(
      test::error_of([&] { Position::from_parts(board, BLACK, 0, SQ_NONE, 0, 1); }).rfind("FEN field 1: white has", 0),
      0u);
}

}  // namespace
}  // namespace legalnet::chess
