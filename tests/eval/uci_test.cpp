// The UCI protocol (eval/uci.h) against a fake net: every command, each policy, and input that
// is long, broken or hostile. The real net through real clients is tests/python/uci_clients.py.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <sstream>

#include "chess/notation.h"
#include "encode/encode.h"
#include "eval/uci.h"

namespace legalnet::eval {
namespace {

int index_of(std::string_view uci) {
  const int from = (uci[0] - 'a') + 8 * (uci[1] - '1'), to = (uci[2] - 'a') + 8 * (uci[3] - '1');
  return from * 64 + to;
}

// A net that gives each listed index its probability (0.001 elsewhere), whatever the position.
UciEngine fake(std::vector<std::pair<std::string_view, float>> outputs, int* calls = nullptr) {
  UciEngine e;
  e.name = "fake";
  e.model = "a fake net";
  e.predict = [outputs, calls](const std::vector<const chess::Position*>& positions, std::vector<float>& probs) {
    EXPECT_EQ(positions.size(), 1u);
    probs.assign(encode::MOVE_INDICES, 0.001f);
    for (const auto& [move, p] : outputs) probs[size_t(index_of(move))] = p;
    if (calls) ++*calls;
  };
  return e;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The engine's answer to `input`, line by line.
std::vector<std::string> talk(const std::string& input, const UciEngine& engine) {
  std::istringstream in(input);
  std::ostringstream out;
  run_uci(in, out, engine);
  return lines_of(out.str());
}

std::vector<std::string> starting(const std::vector<std::string>& lines, std::string_view prefix) {
  std::vector<std::string> found;
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0) found.push_back(l);
  return found;
}

bool contains(const std::vector<std::string>& lines, std::string_view text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

TEST(Uci, HandshakeOptionsAndReady) {
  const auto out = talk("uci\nisready\n", fake({}));
  ASSERT_GE(out.size(), 7u);
  EXPECT_EQ(out[0], "id name fake");
  EXPECT_TRUE(contains(out, "option name Policy type combo default legal var legal var raw var sample"));
  EXPECT_TRUE(contains(out, "option name Seed type spin default 0 min 0 max 2147483647"));
  EXPECT_TRUE(contains(out, "option name Threads type spin default 1 min 1 max 1024"));
  EXPECT_TRUE(contains(out, "promotion is always to a queen"));
  EXPECT_EQ(out[out.size() - 2], "uciok");
  EXPECT_EQ(out.back(), "readyok");
}

TEST(Uci, EachPolicyPicksItsMove) {
  // e2e5 is the net's favourite but illegal; e2e4 the most probable legal move.
  const UciEngine e = fake({{"e2e5", 0.9f}, {"e2e4", 0.6f}, {"d2d4", 0.5f}});
  EXPECT_EQ(starting(talk("go\n", e), "bestmove"), std::vector<std::string>{"bestmove e2e4"});
  // What GUIs and python-chess's chess.engine read: a depth, a score and the move as the pv.
  EXPECT_EQ(starting(talk("go\n", e), "info depth"),
            std::vector<std::string>{"info depth 1 seldepth 1 multipv 1 score cp 0 nodes 1 time 0 pv e2e4"});
  const auto raw = talk("setoption name Policy value raw\nposition startpos\ngo movetime 10\n", e);
  EXPECT_EQ(starting(raw, "bestmove"), std::vector<std::string>{"bestmove e2e5"});
  EXPECT_TRUE(contains(raw, "Policy raw plays the illegal e2e5"));
  EXPECT_TRUE(contains(raw, "top e2e5 0.900 (illegal) e2e4 0.600 d2d4 0.500"));
  // sample: a draw among all outputs, drawn again among the legal ones when illegal; always legal,
  // and the same moves for the same seed.
  std::string gos;
  for (int i = 0; i < 40; ++i) gos += "go\n";
  const std::string sample = "setoption name policy value SAMPLE\n";
  const auto sampled = starting(talk(sample + "setoption name Seed value 7\n" + gos, e), "bestmove");
  ASSERT_EQ(sampled.size(), 40u);
  const chess::Position start;
  for (const auto& b : sampled) EXPECT_NO_THROW(chess::parse_uci(start, b.substr(9))) << b;
  EXPECT_EQ(sampled, starting(talk(sample + "setoption name Seed value 7\n" + gos, e), "bestmove"));
  EXPECT_NE(sampled, starting(talk(sample + "setoption name Seed value 8\n" + gos, e), "bestmove"));
  // ucinewgame restarts the draws.
  EXPECT_EQ(starting(talk(sample + "setoption name Seed value 7\ngo\ngo\nucinewgame\n" + gos, e), "bestmove"), [&] {
    auto expected = std::vector<std::string>(sampled.begin(), sampled.begin() + 2);
    expected.insert(expected.end(), sampled.begin(), sampled.end());
    return expected;
  }());
}

TEST(Uci, LegalShareAndTopMovesInAnInfoString) {
  const auto out = talk("go\n", fake({{"e2e4", 0.5f}, {"a1a5", 0.5f}}));
  // 20 legal moves: 0.5 + 19 * 0.001 of 0.5 + 0.5 + 4094 * 0.001.
  const double share = (0.5 + 19 * 0.001) / (1.0 + 4094 * 0.001);
  EXPECT_TRUE(contains(out, fmt::format("info string legal share {:.2f}% of the net's mass", 100 * share)));
}

TEST(Uci, PromotionsAreToAQueen) {
  const std::string fen = "position fen 8/4P3/8/8/8/8/k7/4K3 w - - 0 1\n";
  EXPECT_EQ(starting(talk(fen + "go\n", fake({{"e7e8", 0.9f}})), "bestmove"),
            std::vector<std::string>{"bestmove e7e8q"});
  // Blocked: illegal, but raw still names the queen the index stands for.
  const std::string blocked = "position fen 4n3/4P3/8/8/8/8/k7/4K3 w - - 0 1\nsetoption name Policy value raw\n";
  EXPECT_EQ(starting(talk(blocked + "go\n", fake({{"e7e8", 0.9f}})), "bestmove"),
            std::vector<std::string>{"bestmove e7e8q"});
  // Black's pawns promote on the first rank; a piece that is not the mover's pawn gets no letter.
  EXPECT_EQ(starting(talk("position fen 4k3/8/8/8/8/8/3p4/K7 b - - 0 1\ngo\n", fake({{"d2d1", 0.9f}})), "bestmove"),
            std::vector<std::string>{"bestmove d2d1q"});
  EXPECT_EQ(starting(talk("setoption name Policy value raw\nposition fen 4k3/8/8/8/8/8/3P4/K7 b - - 0 1\ngo\n",
                          fake({{"d2d1", 0.9f}})),
                     "bestmove"),
            std::vector<std::string>{"bestmove d2d1"});
}

TEST(Uci, NoLegalMoveIsBestmove0000) {
  int calls = 0;
  const UciEngine e = fake({}, &calls);
  const auto mate = talk("position startpos moves f2f3 e7e5 g2g4 d8h4\ngo\n", e);
  EXPECT_EQ(starting(mate, "bestmove"), std::vector<std::string>{"bestmove 0000"});
  EXPECT_TRUE(contains(mate, "checkmate"));
  const auto stalemate = talk("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\ngo\n", e);
  EXPECT_EQ(starting(stalemate, "bestmove"), std::vector<std::string>{"bestmove 0000"});
  EXPECT_EQ(calls, 0);  // the net is not asked
}

TEST(Uci, PositionsWithMovesFromFenAndStart) {
  const UciEngine e = fake({{"e7e5", 0.9f}, {"e2e4", 0.8f}});
  // Black to move after 1. d4: the net's e7e5 is legal.
  EXPECT_EQ(starting(talk("position startpos moves d2d4\ngo\n", e), "bestmove"),
            std::vector<std::string>{"bestmove e7e5"});
  EXPECT_EQ(
      starting(talk("position fen rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1 moves g8f6\ngo\n", e),
               "bestmove"),
      std::vector<std::string>{"bestmove e2e4"});
  // A FEN without its counters, and ucinewgame back to the start.
  EXPECT_EQ(starting(talk("position fen 4k3/4p3/8/8/8/8/4P3/4K3 b - -\nucinewgame\ngo\n", e), "bestmove"),
            std::vector<std::string>{"bestmove e2e4"});
}

TEST(Uci, BadPositionsAreRefusedAndThePreviousOneKept) {
  const UciEngine e = fake({{"e7e5", 0.9f}, {"e2e4", 0.8f}});
  for (const std::string bad : {"position startpos moves d2d4 e2e5", "position startpos moves d2d4 zz",
                                "position fen kkkkkkkk/8/8/8/8/8/8/K7 w - - 0 1",
                                "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "position fen",
                                "position", "position middlegame", "position startpos e2e4"}) {
    const auto out = talk("position startpos moves d2d4\n" + bad + "\ngo\nisready\n", e);
    EXPECT_EQ(starting(out, "bestmove"), std::vector<std::string>{"bestmove e7e5"}) << bad;
    EXPECT_TRUE(contains(out, "info string position refused, the previous one kept: ")) << bad;
    EXPECT_EQ(out.back(), "readyok") << bad;
  }
  const auto kings = talk("position fen kkkkkkkk/8/8/8/8/8/8/K7 w - - 0 1\n", e);
  EXPECT_TRUE(contains(kings, "8 black kings, expected exactly one")) << kings[0];
  const auto illegal = talk("position startpos moves d2d4 e2e5\n", e);
  EXPECT_TRUE(contains(illegal, "move 2 of 2: move 'e2e5': illegal in")) << illegal[0];
}

TEST(Uci, MovesAreCappedAtTheLongestGame) {
  const UciEngine e = fake({{"g1f3", 0.9f}});
  std::string shuffle;  // knights out and back: legal for ever
  for (int i = 0; i < UCI_MAX_MOVES / 4; ++i) shuffle += " g1f3 g8f6 f3g1 f6g8";
  const auto at_cap = talk("position startpos moves" + shuffle + "\ngo\n", e);
  EXPECT_EQ(starting(at_cap, "bestmove"), std::vector<std::string>{"bestmove g1f3"});
  EXPECT_FALSE(contains(at_cap, "refused"));
  const auto over = talk("position startpos moves e2e4 e7e5\nposition startpos moves" + shuffle + " g1f3\ngo\n", e);
  EXPECT_TRUE(contains(over, fmt::format("{} moves, more than {}", UCI_MAX_MOVES + 1, UCI_MAX_MOVES)));
  EXPECT_EQ(starting(over, "bestmove"), std::vector<std::string>{"bestmove g1f3"});  // from 1. e4 e5
}

TEST(Uci, HostileLinesAreIgnoredWithAnEscapedInfoString) {
  const UciEngine e = fake({{"e2e4", 0.9f}});
  const std::string huge(UCI_MAX_LINE + 10, 'x');
  const std::string nul = std::string("go") + '\0' + "\x1b]0;owned\x07 now";
  const auto out = talk(huge + "\n" + nul + "\nhello world\n\n   \t\nisready\n", e);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].rfind(fmt::format("info string ignored a line longer than {} bytes: 'xxx", UCI_MAX_LINE), 0), 0u);
  EXPECT_LT(out[0].size(), 200u);
  EXPECT_EQ(out[1], "info string unknown command 'go\\x00\\x1b]0;owned\\x07 now'");
  EXPECT_EQ(out[2], "info string unknown command 'hello world'");
  EXPECT_EQ(out[3], "readyok");
  // UCI's rule: unknown tokens before a command are skipped, the rest carried out.
  const auto skipped = talk("joho isready\n", e);
  EXPECT_EQ(skipped, (std::vector<std::string>{"info string ignored before 'isready': 'joho'", "readyok"}));
  // A last line without its newline, and CRLF line ends, are lines.
  EXPECT_EQ(talk("isready\r\nisready", e), (std::vector<std::string>{"readyok", "readyok"}));
}

TEST(Uci, SetoptionRefusesBadValuesAndUnknownNames) {
  int threads = 0;
  UciEngine e = fake({{"e2e5", 0.9f}, {"e2e4", 0.6f}});
  e.set_threads = [&](int n) { threads = n; };
  const auto out = talk(
      "setoption name Policy value best\nsetoption name Seed value -1\n"
      "setoption name Threads value 0\nsetoption name Threads value 3\n"
      "setoption name Hash value 16\nsetoption\nsetoption name\ngo\n",
      e);
  EXPECT_TRUE(contains(out, "Policy 'best' is not legal, raw or sample; kept legal"));
  EXPECT_TRUE(contains(out, "Seed '-1' is not a number 0..2147483647; kept 0"));
  EXPECT_TRUE(contains(out, "Threads '0' is not a number 1..1024"));
  EXPECT_TRUE(contains(out, "unknown option 'Hash' ignored"));
  EXPECT_EQ(starting(out, "info string malformed setoption").size(), 2u);
  EXPECT_EQ(threads, 3);
  EXPECT_EQ(starting(out, "bestmove"), std::vector<std::string>{"bestmove e2e4"});
}

TEST(Uci, InfiniteAndPonderHoldTheMoveUntilStop) {
  const UciEngine e = fake({{"e2e4", 0.9f}});
  const auto out = talk("go infinite\nisready\nstop\nstop\ngo ponder\nponderhit\nquit\ngo\n", e);
  std::vector<std::string> answers;
  for (const auto& l : out)
    if (l.rfind("info", 0) != 0) answers.push_back(l);
  // One bestmove per go, after the stop or ponderhit; nothing after quit.
  EXPECT_EQ(answers, (std::vector<std::string>{"readyok", "bestmove e2e4", "bestmove e2e4"}));
  // A move still held at quit or at the end of the input is answered then, as Stockfish does.
  for (const char* ending : {"go infinite\nquit\ngo\n", "go ponder\n"}) {
    std::vector<std::string> bests;
    for (const auto& l : talk(ending, e))
      if (l.rfind("bestmove", 0) == 0) bests.push_back(l);
    EXPECT_EQ(bests, std::vector<std::string>{"bestmove e2e4"}) << ending;
  }
}

}  // namespace
}  // namespace legalnet::eval
