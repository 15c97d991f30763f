#include "pgn/pgn_reader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "chess/notation.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet {
namespace {

std::string write_fixture(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir("pgn") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<PgnGame> read_all(const std::string& path) {
  PgnReader reader(path);
  std::vector<PgnGame> games;
  PgnGame g;
  while (reader.next(g)) games.push_back(g);
  return games;
}

std::string uci_line(const PgnGame& g) {
  const ReplayedGame r = replay_pgn_game(g);
  EXPECT_EQ(r.error, "");
  std::string s;
  for (auto m : r.moves) s += (s.empty() ? "" : " ") + chess::to_uci(m);
  return s;
}

// A Lichess database game: clock comments, evaluation NAGs, a variation, "1..." numbers.
const char* LICHESS = R"([Event "Rated Blitz game"]
[Site "https://lichess.org/abcdefgh"]
[White "a \"quoted\" name"]
[Black "b"]
[Result "0-1"]
[WhiteElo "1500"]

1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. Nf3 $1 2... Nc6?! 3. Bb5 (3. Bc4 Bc5 (3... Nf6) 4. c3) 3... a6!
4. Ba4 ; a rest-of-line comment ) with a stray paren
} 
4... Nf6 5. O-O Be7 {a comment
spanning lines} 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Na5 10. Bc2 c5 11. d4 Qc7 0-1

)";

TEST(PgnReader, LichessGameWithCommentsNagsAndVariations) {
  const auto games = read_all(write_fixture("lichess.pgn", LICHESS));
  ASSERT_EQ(games.size(), 1u);
  const PgnGame& g = games[0];
  EXPECT_EQ(g.tag("White"), "a \"quoted\" name");
  EXPECT_EQ(g.tag("Result"), "0-1");
  EXPECT_EQ(g.result, "0-1");
  EXPECT_EQ(g.sans.size(), 22u);
  EXPECT_EQ(g.first_line, 1);
  EXPECT_EQ(uci_line(g).substr(0, 34), "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4");
  EXPECT_EQ(g.san_lines.back(), 12);
}

TEST(PgnReader, CrlfBomEscapeLinesAndGamesWithoutResult) {
  const std::string text =
      "\xEF\xBB\xBF[Event \"one\"]\r\n\r\n1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6 4.Qxf7# 1-0\r\n\r\n"
      "% an escape line: ignored\r\n"
      "[Event \"two, no result\"]\r\n\r\n1. d4 d5\r\n"
      "[Event \"three\"]\r\n[SetUp \"1\"]\r\n[FEN \"4k3/P7/8/8/8/8/8/4K3 w - - 0 1\"]\r\n\r\n1. a8=Q+ Kd7 *\r\n"
      "1. Nf3 Nf6 2. g3\r\n";  // a fourth game without tags, result or trailing newline
  const auto games = read_all(write_fixture("crlf.pgn", text));
  ASSERT_EQ(games.size(), 4u);
  EXPECT_EQ(games[0].tag("Event"), "one");
  EXPECT_EQ(uci_line(games[0]), "e2e4 e7e5 d1h5 b8c6 f1c4 g8f6 h5f7");
  EXPECT_EQ(games[1].result, "");
  EXPECT_EQ(uci_line(games[1]), "d2d4 d7d5");
  EXPECT_EQ(games[2].first_line, 9);
  EXPECT_EQ(uci_line(games[2]), "a7a8q e8d7");
  EXPECT_EQ(games[3].tags.size(), 0u);
  EXPECT_EQ(uci_line(games[3]), "g1f3 g8f6 g2g3");
  EXPECT_EQ(games[3].number, 4u);
}

TEST(PgnReader, BadMovesAreReportedWithLineAndPly) {
  const std::string text =
      "[Event \"x\"]\n\n1. e4 e5\n2. Ke3 Nc6 1-0\n\n"
      "[Event \"y\"]\n[FEN \"not a fen\"]\n\n1. e4 *\n\n"
      "[Event \"z\"]\n\n1. e4 e5 2. Nf3 *\n";
  const auto games = read_all(write_fixture("bad.pgn", text));
  ASSERT_EQ(games.size(), 3u);
  const ReplayedGame bad = replay_pgn_game(games[0]);
  EXPECT_EQ(bad.error.rfind("line 4, ply 3: move 'Ke3': illegal", 0), 0u) << bad.error;
  EXPECT_EQ(bad.moves.size(), 2u);
  EXPECT_EQ(replay_pgn_game(games[1]).error.rfind("line 6: FEN tag: FEN has 3 fields", 0), 0u);
  EXPECT_EQ(replay_pgn_game(games[2]).error, "");
}

TEST(PgnReader, UnclosedCommentAndMissingFileAreErrors) {
  const std::string path = write_fixture("open.pgn", "[Event \"x\"]\n\n1. e4 {never closed\n2. d4\n");
  PgnReader reader(path);
  PgnGame g;
  try {
    reader.next(g);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":3: comment '{' never closed");
  }
  EXPECT_THROW(PgnReader("/nonexistent.pgn"), Error);
}

TEST(PgnReader, TruncatedCompressedInputIsAnError) {
  const std::string dir = test::temp_dir("trunc");
  {
    OutputFile out(dir + "/g.pgn.gz");
    std::string text;
    for (int i = 0; i < 2000; ++i) text += "[Event \"e\"]\n\n1. e4 e5 2. Nf3 Nc6 *\n\n";
    out.write(text);
    out.commit();
  }
  std::string bytes = test::read_file(dir + "/g.pgn.gz");
  std::ofstream(dir + "/cut.pgn.gz", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  PgnReader reader(dir + "/cut.pgn.gz");
  PgnGame g;
  EXPECT_THROW(
      {
        while (reader.next(g)) {
        }
      },
      Error);
}

}  // namespace
}  // namespace legalnet
