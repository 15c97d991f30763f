#include "pgn/pgn_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "chess/notation.h"
#include "support/helpers.h"
#include "util/error.h"
#include "util/text.h"

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
  // Reported at the FEN tag's own line, not the game's first.
  EXPECT_EQ(replay_pgn_game(games[1]).error.rfind("line 7: FEN tag: FEN has 3 fields", 0), 0u)
      << replay_pgn_game(games[1]).error;
  EXPECT_EQ(replay_pgn_game(games[1]).skip_reason, skip_reason::FEN_TAG);
  EXPECT_EQ(replay_pgn_game(games[2]).error, "");
}

// A FEN tag's void castling rights are dropped and the game kept, with the note the tool prints.
TEST(PgnReader, VoidCastlingRightsInAFenTagAreANote) {
  const std::string text = "[FEN \"4k3/8/8/8/8/8/8/4K3 w K - 0 1\"]\n[SetUp \"1\"]\n\n1. Kd2 *\n";
  const auto games = read_all(write_fixture("void-castling.pgn", text));
  ASSERT_EQ(games.size(), 1u);
  const ReplayedGame r = replay_pgn_game(games[0]);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.note, "FEN tag: castling rights 'K' dropped (the king or rook is not on its square)");
}

TEST(PgnReader, AnUnclosedCommentCostsOnlyItsGameAndAMissingFileIsAnError) {
  const auto games = read_all(write_fixture("open.pgn", "[Event \"x\"]\n\n1. e4 {never closed\n2. d4\n"));
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(games[0].error, "comment '{' never closed");
  EXPECT_EQ(games[0].error_line, 3);
  const ReplayedGame r = replay_pgn_game(games[0]);
  EXPECT_EQ(r.error, "line 3: comment '{' never closed");
  EXPECT_EQ(r.skip_reason, skip_reason::SYNTAX);
  try {
    PgnReader reader("/nonexistent.pgn");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open '/nonexistent.pgn': No such file or directory");
  }
}

// A file that is not PGN at all fails as a whole, naming why; a PGN file never does.
TEST(PgnReader, FilesThatAreNotPgnFail) {
  auto failure = [](const std::string& path) -> std::string {
    try {
      read_all(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "read";
  };
  const std::string binary = write_fixture("binary.pgn", std::string("\x7f"
                                                                     "ELF\x02\x01\0\0garbage",
                                                                     14));
  EXPECT_EQ(failure(binary), binary + ":1: binary data (a NUL byte): not a PGN file");
  const std::string prose = write_fixture("readme.pgn", "This is a README.\nIt has words, not games.\n");
  EXPECT_EQ(failure(prose), prose + ": not PGN: no tag pair, move number or result in 2 lines");
  const std::string fake_zst = write_fixture("games.pgn.zst", "[Event \"x\"]\n\n1. e4 *\n");
  EXPECT_EQ(failure(fake_zst), "'" + fake_zst + "' is not zstd data, as its name says");
  const std::string fake_gz = write_fixture("games.pgn.gz", "1. e4 *\n");
  EXPECT_EQ(failure(fake_gz), "'" + fake_gz + "' is not gzip data, as its name says");
  EXPECT_EQ(failure(write_fixture("empty.pgn", "")), "read");
  EXPECT_EQ(failure(write_fixture("blank.pgn", "\n\n  \n")), "read");
}

// The corpus: one small file for each pattern of real-world PGN, its expectations on its first
// line ("% expect: read=N kept=N rows=N skipped=REASON:N,... [notes=N]", a PGN escape line).
struct Expected {
  uint64_t read = 0, kept = 0, rows = 0, notes = 0;
  std::map<std::string, uint64_t> skipped;
};

Expected expectations_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  first = first.substr(0, first.find('\r'));
  EXPECT_EQ(first.rfind("% expect: ", 0), 0u) << path;
  Expected e;
  std::istringstream fields(first.substr(10));
  std::string field;
  // Fields are separated by spaces, but reasons may hold spaces: a field starts with "name=".
  std::vector<std::string> parts;
  while (fields >> field) {
    if (field.find('=') == std::string::npos && !parts.empty())
      parts.back() += " " + field;
    else
      parts.push_back(field);
  }
  for (const std::string& part : parts) {
    const std::string name = part.substr(0, part.find('=')), value = part.substr(part.find('=') + 1);
    if (name == "read") e.read = std::stoull(value);
    if (name == "kept") e.kept = std::stoull(value);
    if (name == "rows") e.rows = std::stoull(value);
    if (name == "notes") e.notes = std::stoull(value);
    if (name == "skipped") {
      std::istringstream reasons(value);
      std::string item;
      while (std::getline(reasons, item, ','))
        e.skipped[item.substr(0, item.rfind(':'))] = std::stoull(item.substr(item.rfind(':') + 1));
    }
  }
  return e;
}

TEST(PgnReader, RealWorldPatternsCorpus) {
  const std::string dir = std::string(LEGALNET_TEST_SOURCE_DIR) + "/pgn/corpus";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    const Expected expected = expectations_of(path);
    Expected got;
    for (const PgnGame& game : read_all(path)) {
      ++got.read;
      const ReplayedGame r = replay_pgn_game(game);
      if (!r.error.empty()) {
        ++got.skipped[r.skip_reason];
        continue;
      }
      ++got.kept;
      got.rows += r.moves.size();
      got.notes += !r.note.empty();
    }
    EXPECT_EQ(got.read, expected.read);
    EXPECT_EQ(got.kept, expected.kept);
    EXPECT_EQ(got.rows, expected.rows);
    EXPECT_EQ(got.notes, expected.notes);
    EXPECT_EQ(got.skipped, expected.skipped);
    ++files;
  }
  EXPECT_GE(files, 8u);
}

// The reader's game boundaries on the patterns that used to lose games.
TEST(PgnReader, GamesAfterABrokenOneAreKeptWithTheirOwnNumbersAndLines) {
  const std::string text =
      "[Event \"1\"]\n\n1. e4 (1. d4 d5 *\n\n"  // the variation is never closed
      "[Event \"2\"]\n\n1. c4 c5 *\n"
      "[Event \"3\"] [Site \"s\"] 1. Nf3 Nf6 1/2 [Event \"4\"]\n1. g3 *\n";
  const auto games = read_all(write_fixture("boundaries.pgn", text));
  ASSERT_EQ(games.size(), 4u);
  EXPECT_EQ(games[0].error, "variation '(' never closed");
  EXPECT_EQ(games[0].error_line, 3);
  EXPECT_EQ(games[1].number, 2u);
  EXPECT_EQ(games[1].first_line, 5);
  EXPECT_EQ(uci_line(games[1]), "c2c4 c7c5");
  EXPECT_EQ(games[2].tag("Site"), "s");
  EXPECT_EQ(games[2].result, "1/2-1/2");
  EXPECT_EQ(uci_line(games[2]), "g1f3 g8f6");
  EXPECT_EQ(games[3].tag("Event"), "4");
  EXPECT_EQ(games[3].first_line, 8);
  EXPECT_EQ(uci_line(games[3]), "g2g3");
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
  EXPECT_EQ(test::error_of([&] {
              while (reader.next(g)) {
              }
            }),
            "'" + dir + "/cut.pgn.gz' is truncated (the compressed stream ends early)");
}

// A line like a tag pair inside a comment or variation that closes later is part of it, and
// NUL bytes separate tokens: such files are read game for game as python-chess reads them.
TEST(PgnReader, TagLinesInsideClosedCommentsAndNulBytesReadAsPythonChessReadsThem) {
  using namespace std::string_literals;
  const std::string corpus = std::string(LEGALNET_TEST_SOURCE_DIR) + "/pgn/corpus/";
  const std::vector<std::string> files = {
      corpus + "tag_lines_inside_comments.pgn",
      write_fixture("comment.pgn",
                    "[Event \"a\"]\n\n1. e4 {a comment\n[Event \"looks like a tag\"]\n} e5 2. Nf3 *\n\n"
                    "[Event \"b\"]\n\n1. d4 *\n"),
      write_fixture("variation.pgn",
                    "[Event \"a\"]\n\n1. e4 (1. d4 d5\n[Event \"x\"]\n2. c4) e5 2. Nf3 *\n\n"
                    "[Event \"b\"]\n\n1. d4 *\n"),
      write_fixture("nul_between.pgn",
                    "[Event \"a\"]\n\n1. e4 e5 *\n\n\0\n[Event \"b\"]\n\n1. d4 d5 *\n\n"
                    "[Event \"c\"]\n\n1. c4 *\n"s),
      write_fixture("nul_in_moves.pgn", "[Event \"a\"]\n\n1. e4 e5 \0 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 d5\0*\n"s),
      write_fixture("braces_in_tags.pgn",
                    "[Event \"a\"]\n\n1. e4 {\n[Annotator \"x (y)\"]\n[Event \"z\"]\n\n1. d4 *\n} e5 *\n\n"
                    "[Event \"b\"]\n\n1. c4 c5 *\n"),
  };
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    std::string ours;
    for (const PgnGame& game : read_all(path))
      if (replay_pgn_game(game).error.empty() && !game.sans.empty()) ours += uci_line(game) + "\n";
    const std::string theirs = test::run_command(test::python_path() + " " + LEGALNET_TEST_SOURCE_DIR +
                                                 "/pgn/python_chess_games.py '" + path + "'");
    EXPECT_EQ(ours, theirs);
  }
}

// Text from a file on its way to stderr: control characters, C1 controls and bytes that are
// not UTF-8 as \xNN; UTF-8 text as it is; long text cut.
TEST(Printable, EscapesControlsAndBadBytesKeepsUtf8) {
  using namespace std::string_literals;
  EXPECT_EQ(printable("\x1b]0;title\x07\x1b[2J"), "\\x1b]0;title\\x07\\x1b[2J");
  EXPECT_EQ(printable("a\0b\tc\r\n\x7f"s), "a\\x00b\\x09c\\x0d\\x0a\\x7f");
  EXPECT_EQ(printable("Caf\xC3\xA9 \xE2\x99\x94 \xF0\x9F\x98\x80"), "Caf\xC3\xA9 \xE2\x99\x94 \xF0\x9F\x98\x80");
  EXPECT_EQ(printable("\xC2\x9B"
                      "2J \x9B \xC3 \xE0\x80\xAF \xED\xA0\x80"),
            "\\xc2\\x9b2J \\x9b \\xc3 \\xe0\\x80\\xaf \\xed\\xa0\\x80");
  EXPECT_EQ(printable(std::string(500, 'a'), 10), "aaaaaaaaaa...");
  EXPECT_EQ(printable(std::string(10, 'a'), 10), "aaaaaaaaaa");
  // The cut falls between pieces: an escape or a character that would pass the limit is left
  // out whole (the fuzzer found a 206-byte excerpt of a 200-byte limit when it did not).
  EXPECT_EQ(printable("aaaaaaaa\x7f\x7f", 10), "aaaaaaaa...");
  EXPECT_EQ(printable("aaaaaaaa\xF0\x9F\x98\x80", 10), "aaaaaaaa...");
  EXPECT_EQ(printable("aaaaaa\x7f", 10), "aaaaaa\\x7f");
  for (size_t limit = 0; limit < 12; ++limit)
    for (const char* text : {"\x7f\x01\x02\x03", "\xE2\x99\x94\xE2\x99\x94\xE2\x99\x94\xE2\x99\x94",
                             "ab\x7f\xE2\x99\x94"
                             "cd\x9b"}) {
      const std::string out = printable(text, limit);
      EXPECT_LE(out.size(), limit + 3) << limit << ' ' << out;
    }
  const auto games = read_all(write_fixture("variant.pgn", "[Variant \"\x1b]0;owned\x07\"]\n\n1. e4 *\n"));
  ASSERT_EQ(games.size(), 1u);
  EXPECT_EQ(replay_pgn_game(games[0]).skip_reason, "variant \\x1b]0;owned\\x07");
}

// Streams read with bounded memory: a line past the cap ends the read with its file and line
// (a few hundred bytes of zstd hold it); a movetext longer than any game keeps no more moves
// than that, costs only its own game, and the next game is read.
TEST(PgnReader, LinesAndGamesLongerThanTheCapsAreBounded) {
  const std::string dir = test::temp_dir("caps");
  {
    // A game, a game with a comment over the line cap, a game; and a file of one long line,
    // which is not PGN.
    OutputFile out(dir + "/line.pgn.zst");
    out.write("[Event \"a\"]\n\n1. e4 e5 *\n\n[Event \"long\"]\n\n1. e4 {");
    const std::string block(1 << 20, '[');
    for (size_t i = 0; i <= MAX_PGN_LINE_BYTES >> 20; ++i) out.write(block);
    out.write("} e5\r\n2. Nf3 *\n[Event \"c\"]\n\n1. d4 *\n");
    out.commit();
    OutputFile binary(dir + "/binary.pgn.zst");
    for (size_t i = 0; i <= MAX_PGN_LINE_BYTES >> 20; ++i) binary.write(std::string(1 << 20, 'x'));
    binary.commit();
  }
  PgnReader long_line(dir + "/line.pgn.zst");
  std::vector<PgnGame> read;
  for (PgnGame g; long_line.next(g);) read.push_back(g);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(uci_line(read[0]), "e2e4 e7e5");
  EXPECT_EQ(read[1].error, "a line longer than 16 MiB");
  EXPECT_EQ(read[1].error_line, 7);
  EXPECT_EQ(read[2].tag("Event"), "c");
  EXPECT_EQ(uci_line(read[2]), "d2d4");
  EXPECT_EQ(read[2].first_line, 9);
  PgnReader no_pgn(dir + "/binary.pgn.zst");
  PgnGame g;
  EXPECT_EQ(test::error_of([&] {
              while (no_pgn.next(g)) {
              }
            }),
            dir + "/binary.pgn.zst: not PGN: no tag pair, move number or result in 1 lines");

  std::string text = "[Event \"endless\"]\n\n";
  for (size_t i = 0; i < MAX_GAME_PLIES / 4 + 10; ++i) text += std::to_string(2 * i + 1) + ". Nf3 Nf6 Ng1 Ng8\n";
  text += "*\n\n[Event \"next\"]\n\n1. e4 e5 *\n";
  std::string tags = "[Event \"tags\"]\n";
  for (size_t i = 0; i <= MAX_GAME_TAGS; ++i) tags += "[T" + std::to_string(i) + " \"v\"]\n";
  const auto games = read_all(write_fixture("endless.pgn", text + tags + "\n1. d4 *\n"));
  ASSERT_EQ(games.size(), 3u);
  EXPECT_EQ(games[0].sans.size(), MAX_GAME_PLIES);
  EXPECT_EQ(games[0].error, "more than 17697 moves, longer than any game under the 75-move rule");
  EXPECT_EQ(games[0].error_line, 3 + int(MAX_GAME_PLIES / 4));
  EXPECT_EQ(games[1].tag("Event"), "next");
  EXPECT_EQ(uci_line(games[1]), "e2e4 e7e5");
  EXPECT_EQ(games[2].tags.size(), MAX_GAME_TAGS);
  EXPECT_EQ(games[2].error, "more than 1000 tags");
}

}  // namespace
}  // namespace legalnet
