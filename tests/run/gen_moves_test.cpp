#include "run/gen_moves/gen_moves.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "chess/notation.h"
#include "pgn/pgn_reader.h"
#include "run/gen_moves/perft.h"
#include "run/gen_moves/positions.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet {
using namespace run;
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

GenMovesOptions options(uint64_t games, uint64_t seed, const std::string& out) {
  GenMovesOptions o;
  o.games = games;
  o.seed = seed;
  o.out = out;
  o.quiet = true;
  return o;
}

TEST(GenMoves, FixedSeedGivesKnownPliesAndBytes) {
  const std::string out = test::temp_dir("known") + "/g.pgn";
  const GenMovesReport stats = run_gen_moves(options(200, 42, out));
  EXPECT_EQ(stats.games, 200u);
  EXPECT_EQ(stats.plies, 71256u);
  EXPECT_EQ(fnv1a(test::read_file(out)), 0xeb0eefc31d30073ULL);
}

TEST(GenMoves, OutputIsIdenticalForAnyThreadCount) {
  const std::string dir = test::temp_dir("threads");
  std::string first;
  for (int threads : {1, 2, 3}) {
    GenMovesOptions o = options(300, 7, dir + "/t" + std::to_string(threads) + ".pgn");
    o.threads = threads;
    run_gen_moves(o);
    const std::string text = test::read_file(o.out);
    if (threads == 1)
      first = text;
    else
      EXPECT_EQ(text, first) << threads << " threads";
  }
}

TEST(GenMoves, ShardsConcatenateToTheUnshardedRun) {
  const std::string dir = test::temp_dir("shards");
  run_gen_moves(options(101, 3, dir + "/all.pgn"));
  std::string joined;
  for (int k = 0; k < 4; ++k) {
    GenMovesOptions o = options(101, 3, dir + "/s" + std::to_string(k) + ".pgn");
    o.shard = k;
    o.num_shards = 4;
    run_gen_moves(o);
    joined += test::read_file(o.out);
  }
  EXPECT_EQ(joined, test::read_file(dir + "/all.pgn"));
  EXPECT_EQ(shard_range(101, 0, 4).first, 0u);
  EXPECT_EQ(shard_range(101, 3, 4).last, 101u);
  EXPECT_EQ(shard_range(101, 1, 4).first, shard_range(101, 0, 4).last);
}

TEST(GenMoves, ShardComesFromSlurmArrayWhenNotGiven) {
  setenv("SLURM_ARRAY_TASK_ID", "5", 1);
  setenv("SLURM_ARRAY_TASK_MIN", "3", 1);
  setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  GenMovesOptions o;
  apply_slurm_array_shard(o, /*shard_given=*/false);
  EXPECT_EQ(o.shard, 2);
  EXPECT_EQ(o.num_shards, 4);
  GenMovesOptions given;
  given.shard = 1;
  apply_slurm_array_shard(given, /*shard_given=*/true);
  EXPECT_EQ(given.num_shards, 1);
  setenv("SLURM_ARRAY_TASK_ID", "9", 1);
  EXPECT_NE(
      test::error_of([&] { apply_slurm_array_shard(o, false); }).find("SLURM_ARRAY_TASK_ID=9 is outside the array"),
      std::string::npos);
  unsetenv("SLURM_ARRAY_TASK_ID");
  unsetenv("SLURM_ARRAY_TASK_MIN");
  unsetenv("SLURM_ARRAY_TASK_COUNT");
}

TEST(GenMoves, EveryGameReplaysAndEndsExactlyWhenTheRulesSay) {
  const std::string out = test::temp_dir("replay") + "/g.pgn";
  run_gen_moves(options(300, 11, out));
  PgnReader reader(out);
  PgnGame game;
  uint64_t count = 0;
  while (reader.next(game)) {
    std::vector<chess::Termination> endings;
    const ReplayedGame replayed =
        replay_pgn_game(game, [&](const chess::Position& pos, const chess::MoveList& legal, chess::Move) {
          endings.push_back(chess::termination(pos, legal.size()));
        });
    ASSERT_EQ(replayed.error, "");
    for (auto e : endings) ASSERT_EQ(e, chess::Termination::NONE) << "game " << game.number << " went on after its end";
    chess::Position last = replayed.start;
    for (auto m : replayed.moves) last.do_move(m);
    const chess::Termination end = chess::termination(last);
    ASSERT_NE(end, chess::Termination::NONE);
    EXPECT_EQ(game.tag("Termination"), chess::termination_name(end));
    EXPECT_EQ(game.tag("Result"), chess::result_string(end, last.side_to_move()));
    EXPECT_EQ(game.result, game.tag("Result"));
    EXPECT_EQ(game.tag("Round"), std::to_string(count));
    EXPECT_EQ(game.tag("PlyCount"), std::to_string(replayed.moves.size()));
    EXPECT_EQ(game.tag("Seed"), "11");
    ++count;
  }
  EXPECT_EQ(count, 300u);
}

TEST(GenMoves, LinesAreWrappedAt80Columns) {
  const std::string out = test::temp_dir("wrap") + "/g.pgn";
  run_gen_moves(options(50, 1, out));
  std::istringstream in(test::read_file(out));
  size_t longest = 0;
  for (std::string line; std::getline(in, line);) longest = std::max(longest, line.size());
  EXPECT_LE(longest, 80u);
  EXPECT_GE(longest, 70u);
}

TEST(GenMoves, AnIndependentParserReadsTheSameMoves) {
  // pgn-extract (Debian) checks every move and converts them to UCI on its own.
  const std::string out = test::temp_dir("pgnextract") + "/g.pgn";
  run_gen_moves(options(40, 5, out));
  const std::string converted = test::run_command(test::pgn_extract_path() + " -s -Wuci --nocomments " + out);
  std::vector<std::string> theirs;
  std::istringstream in(converted);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '[') theirs.push_back(line);
  std::vector<std::string> ours;
  PgnReader reader(out);
  PgnGame game;
  std::string current;
  while (reader.next(game)) {
    const ReplayedGame replayed = replay_pgn_game(game);
    std::string text;
    for (auto m : replayed.moves) text += chess::to_uci(m) + " ";
    ours.push_back(text + game.result);
  }
  // pgn-extract wraps long lines; join each game's movetext before comparing.
  std::vector<std::string> joined;
  std::string acc;
  for (const auto& line : theirs) {
    acc += (acc.empty() ? "" : " ") + line;
    if (line.size() >= 3 && (line.substr(line.size() - 3) == "1-0" || line.substr(line.size() - 3) == "0-1" ||
                             line.substr(line.size() - 3) == "1/2" || line.back() == '*')) {
      for (auto& c : acc) c = char(std::tolower(c));
      joined.push_back(acc);
      acc.clear();
    }
  }
  ASSERT_EQ(joined.size(), ours.size());
  for (size_t i = 0; i < ours.size(); ++i) EXPECT_EQ(joined[i], ours[i]) << "game " << i;
}

TEST(GenMoves, StatisticsMatchTheKnownDistribution) {
  // Reference, 10,000 games of an independent implementation confirmed with python-chess:
  // mean 358 plies; 15.4% mate, 6.2% stalemate, 66.6% insufficient material, 11.9% 75-move rule.
  GenMovesOptions o = options(4000, 2024, test::temp_dir("stats") + "/g.pgn");
  o.threads = 2;
  const GenMovesReport s = run_gen_moves(o);
  const double n = double(s.games);
  EXPECT_NEAR(double(s.plies) / n, 358.0, 4 * 200.0 / std::sqrt(n));  // game lengths have sd < 200
  auto share_near = [&](chess::Termination t, double p) {
    const double se = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(double(s.endings[int(t)]) / n, p, 4 * se + 0.004) << chess::termination_name(t);
  };
  share_near(chess::Termination::CHECKMATE, 0.154);
  share_near(chess::Termination::STALEMATE, 0.062);
  share_near(chess::Termination::INSUFFICIENT_MATERIAL, 0.666);
  share_near(chess::Termination::SEVENTYFIVE_MOVES, 0.119);
  EXPECT_LT(double(s.endings[int(chess::Termination::FIVEFOLD_REPETITION)]) / n, 0.01);
}

TEST(GenMoves, MaxPliesAndStartFen) {
  const std::string dir = test::temp_dir("maxplies");
  GenMovesOptions o = options(5, 1, dir + "/g.pgn");
  o.max_plies = 7;
  o.start_fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
  run_gen_moves(o);
  const std::string text = test::read_file(o.out);
  EXPECT_NE(text.find("[Termination \"max plies\"]"), std::string::npos);
  EXPECT_NE(text.find("[SetUp \"1\"]\n[FEN \"" + o.start_fen + "\"]"), std::string::npos);
  EXPECT_NE(text.find("\n1... "), std::string::npos);
  PgnReader reader(o.out);
  PgnGame game;
  while (reader.next(game)) {
    EXPECT_EQ(game.result, "*");
    EXPECT_EQ(replay_pgn_game(game).moves.size(), 7u);
  }
}

TEST(GenMoves, CompressedOutputsHoldTheSameText) {
  const std::string dir = test::temp_dir("compress");
  run_gen_moves(options(30, 8, dir + "/g.pgn"));
  run_gen_moves(options(30, 8, dir + "/g.pgn.gz"));
  run_gen_moves(options(30, 8, dir + "/g.pgn.zst"));
  const std::string plain = test::read_file(dir + "/g.pgn");
  for (const char* name : {"/g.pgn.gz", "/g.pgn.zst"}) {
    EXPECT_NE(test::read_file(dir + name), plain);
    InputFile in(dir + name);
    std::string text;
    char buf[4096];
    for (size_t n; (n = in.read(buf, sizeof buf)) > 0;) text.append(buf, n);
    EXPECT_EQ(text, plain) << name;
  }
}

TEST(GenMoves, FailuresLeaveNoFileUnderTheTargetName) {
  // Outputs are checked before any game is played, so a missing folder is named up front.
  EXPECT_EQ(test::error_of([&] { run_gen_moves(options(10, 1, "/nonexistent-dir/g.pgn")); }),
            "--out '/nonexistent-dir/g.pgn': its folder '/nonexistent-dir' does not exist");
  const std::string dir = test::temp_dir("fail");
  GenMovesOptions bad = options(10, 1, dir + "/g.pgn");
  bad.start_fen = "not a fen";
  EXPECT_NE(test::error_of([&] { run_gen_moves(bad); }).find("FEN has 3 fields"), std::string::npos);
  bad.start_fen.clear();
  bad.shard = 3;
  bad.num_shards = 2;
  EXPECT_EQ(test::error_of([&] { run_gen_moves(bad); }), "--shard 3 is not in 0..1");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

// The table's ranges hold for a library caller too: one check, the parser's and validate()'s.
TEST(GenMoves, TheTableChecksWhatALibraryCallerFills) {
  const std::string dir = test::temp_dir("table");
  GenMovesOptions o = options(10, 1, dir + "/g.pgn");
  o.threads = -1;
  EXPECT_EQ(test::error_of([&] { run_gen_moves(o); }), "--threads -1 is not in 0..1024");
  o.threads = 1;
  o.max_plies = -2;
  EXPECT_EQ(test::error_of([&] { run_gen_moves(o); }), "--max-plies -2 is not in 0..100000");
  GenPositionsOptions p;
  p.start = "perft";
  p.depth = 6;
  EXPECT_EQ(test::error_of([&] { run_gen_positions(p); }), "--depth 6 is not in 0..5");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(GenMoves, ReportJsonAndSummaryComeFromTheReport) {
  GenMovesOptions o = options(90, 4, "-");
  o.shard = 1;
  o.num_shards = 3;
  GenMovesReport r;
  r.options = o;
  r.first_game = 30;
  r.games = 30;
  r.plies = 600;
  r.endings[int(chess::Termination::CHECKMATE)] = 10;
  r.endings[MAX_PLIES_ENDING] = 20;
  r.seconds = 2;
  const nlohmann::ordered_json j = r.json();
  std::vector<std::string> keys;  // the options through the table's record(), in report.json's order
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"tool", "version", "command_line", "seed", "start", "pressure", "games_in_run",
                                      "shard", "num_shards", "first_game", "games", "plies", "mean_plies", "endings",
                                      "seconds", "games_per_second", "plies_per_second"}));
  EXPECT_EQ(j["games_in_run"], 90);
  EXPECT_EQ(j["first_game"], 30);
  EXPECT_EQ(j["endings"]["max plies"], 20);
  EXPECT_DOUBLE_EQ(j["plies_per_second"].get<double>(), 300.0);
  testing::internal::CaptureStderr();
  r.print();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "gen_moves: 30 games, 600 plies, 20.0 plies/game, 2.00 s, 15 games/s, 300 plies/s\n"
            "  checkmate                        10  33.33%\n"
            "  max plies                        20  66.67%\n");
}

TEST(GenMoves, PerftPrintsStockfishsFormatAndNotesDroppedCastlingRights) {
  PerftOptions p;
  p.depth = 2;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_perft(p), 400u);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("e2e4: 20\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nNodes searched: 400\n"), std::string::npos) << out;
  p.fen = "4k3/8/8/8/8/8/8/R3K3 w KQ - 0 1";
  p.depth = 1;
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_perft(p), 16u);  // 5 king moves, 10 rook moves and O-O-O
  testing::internal::GetCapturedStdout();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "gen_moves: note: castling rights 'K' dropped (the king or rook is not on its square)\n");
}

}  // namespace
}  // namespace legalnet
