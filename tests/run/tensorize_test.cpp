// tensorize's stages (run/tensorize/): the game router's split, dedupe, limit and skips, the
// split's file names, the report's JSON and summary, the option table and merge's run.
#include <gtest/gtest.h>

#include <filesystem>

#include "chess/movegen.h"
#include "run/tensorize/game_router.h"
#include "run/tensorize/merge.h"
#include "run/tensorize/tensorize.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet {
using namespace run;
namespace {

// A game of `plies` rows starting at row `first` of `rows` (the start position repeated: every
// row has the same key), from game `number` of source 0.
EncodedGame game_of(data::EncodedRows& rows, int plies, uint64_t number) {
  EncodedGame g;
  g.first_row = uint32_t(rows.size());
  const chess::Position start;
  for (int i = 0; i < plies; ++i) rows.add(start, chess::MoveList(start), chess::Move::none(), i);
  g.last_row = uint32_t(rows.size());
  g.number = number;
  g.info.source_game = int64_t(number);
  g.source_path = "games.pgn";
  g.first_line = int(10 * number);
  return g;
}

EncodedGame bad_game(uint64_t number, const std::string& reason) {
  EncodedGame g;
  g.number = number;
  g.source_path = "games.pgn";
  g.first_line = 3;
  g.error = "line 4: bad";
  g.skip_reason = reason;
  return g;
}

TEST(GameRouter, StopsBeforeTheGameThatWouldPassMaxPositionsAndReadsNoFurther) {
  TensorizeOptions o;
  o.max_positions = 5;
  TensorizeReport report;
  Progress progress("positions", 0, false);
  GameRouter router(o, report, progress);
  data::EncodedRows rows;
  const EncodedGame a = game_of(rows, 3, 1), b = game_of(rows, 3, 2), c = game_of(rows, 1, 3);
  EXPECT_EQ(router.route(a, rows), std::optional<size_t>(0));
  EXPECT_EQ(router.selected(), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(router.route(b, rows), std::nullopt);
  EXPECT_TRUE(router.stopped());
  EXPECT_EQ(router.route(c, rows), std::nullopt);  // would fit, but the run has stopped
  EXPECT_EQ(report.games_read, 2u);
  EXPECT_EQ(report.games, 1u);
  EXPECT_EQ(report.positions, 3u);
  EXPECT_TRUE(report.stopped_at_max_positions);
}

TEST(GameRouter, DedupeDropsRowsWrittenBefore) {
  TensorizeOptions o;
  o.dedupe = true;
  TensorizeReport report;
  Progress progress("positions", 0, false);
  GameRouter router(o, report, progress);
  data::EncodedRows rows;
  const EncodedGame a = game_of(rows, 3, 1), b = game_of(rows, 2, 2);
  ASSERT_TRUE(router.route(a, rows));
  EXPECT_EQ(router.selected().size(), 1u);  // the same position three times
  ASSERT_TRUE(router.route(b, rows));
  EXPECT_TRUE(router.selected().empty());
  EXPECT_EQ(report.dropped_duplicates, 4u);
  EXPECT_EQ(report.positions, 1u);
  EXPECT_EQ(report.games, 2u);
}

TEST(GameRouter, SplitsByGameIdentityWhateverTheOrder) {
  TensorizeOptions o;
  o.split = {0.5, 0.3, 0.2};
  o.split_seed = 9;
  data::EncodedRows rows;
  std::vector<EncodedGame> games;
  for (uint64_t n = 1; n <= 200; ++n) games.push_back(game_of(rows, 1, n));
  auto parts = [&](bool reversed) {
    TensorizeReport report;
    Progress progress("positions", 0, false);
    GameRouter router(o, report, progress);
    std::map<uint64_t, size_t> part_of;
    for (size_t i = 0; i < games.size(); ++i) {
      const EncodedGame& g = games[reversed ? games.size() - 1 - i : i];
      part_of[g.number] = *router.route(g, rows);
    }
    return part_of;
  };
  const auto forward = parts(false);
  EXPECT_EQ(forward, parts(true));
  std::vector<int> counts(3);
  for (const auto& [number, part] : forward) ++counts[part];
  EXPECT_GT(counts[0], 70);  // 100 expected
  EXPECT_GT(counts[1], 35);  // 60
  EXPECT_GT(counts[2], 20);  // 40
}

TEST(GameRouter, BadGamesAreCountedByReasonAndFatalWithStrict) {
  TensorizeOptions o;
  TensorizeReport report;
  Progress progress("positions", 0, false);
  GameRouter router(o, report, progress);
  data::EncodedRows rows;
  testing::internal::CaptureStderr();
  for (uint64_t n = 1; n <= 25; ++n) EXPECT_EQ(router.route(bad_game(n, "variant Atomic"), rows), std::nullopt);
  EncodedGame noted = game_of(rows, 2, 30);
  noted.note = "FEN tag: castling rights 'K' dropped (the king or rook is not on its square)";
  EXPECT_TRUE(router.route(noted, rows));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(report.skipped_games, 25u);
  EXPECT_EQ(report.skipped_by_reason.at("variant Atomic"), 25u);
  EXPECT_EQ(report.games_with_notes, 1u);
  EXPECT_EQ(report.games_read, 26u);
  EXPECT_NE(err.find("tensorize: skipped games.pgn: game 1 (line 3): line 4: bad\n"), std::string::npos) << err;
  EXPECT_EQ(err.find("game 21 "), std::string::npos) << "20 messages a reason at most";
  EXPECT_NE(err.find("tensorize: further games skipped for 'variant Atomic' are only counted in the summary\n"),
            std::string::npos);
  EXPECT_NE(err.find("tensorize: note: games.pgn: game 30 (line 300): FEN tag: castling rights 'K' dropped"),
            std::string::npos);
  o.strict = true;
  EXPECT_EQ(test::error_of([&] { router.route(bad_game(40, "syntax"), rows); }),
            "games.pgn: game 40 (line 3): line 4: bad");
}

TEST(TensorizeOutputs, SplitPartsAreNamedBesideTheOutput) {
  EXPECT_EQ(split_output_path("data/set.h5", "val"), "data/set.val.h5");
  EXPECT_EQ(split_output_path("data.d/set", "train"), "data.d/set.train.h5");
  EXPECT_EQ(split_part_names(3), (std::vector<std::string>{"train", "val", "test"}));
  TensorizeOptions o;
  o.out = "d.h5";
  EXPECT_EQ(dataset_paths(o), (std::vector<std::string>{"d.h5"}));
  o.split = {0.9, 0.1};
  EXPECT_EQ(dataset_paths(o), (std::vector<std::string>{"d.train.h5", "d.val.h5"}));
}

TEST(TensorizeReport, JsonAndSummaryComeFromTheReport) {
  TensorizeOptions o;
  o.pgn_files = {"a.pgn"};
  o.dedupe = true;
  o.max_positions = 7;
  TensorizeReport r;
  r.options = o;
  r.games_read = 4;
  r.games = 3;
  r.positions = 6;
  r.skipped_games = 1;
  r.skipped_by_reason["syntax"] = 1;
  r.dropped_duplicates = 2;
  r.stopped_at_max_positions = true;
  r.outputs = {"d.h5"};
  r.output_positions = {6};
  r.bytes = 600;
  r.seconds = 2;
  const nlohmann::ordered_json j = r.json();
  std::vector<std::string> keys;  // the options through the table's record(), in report.json's order
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"tool", "version", "command_line", "pgn_files", "games_read", "games_kept",
                                            "games_skipped", "skipped_by_reason", "games_with_notes", "positions",
                                            "duplicate_positions_dropped", "stopped_at_max_positions", "outputs",
                                            "bytes", "seconds", "positions_per_second"}));
  EXPECT_EQ(j["pgn_files"][0], "a.pgn");
  EXPECT_EQ(j["games_kept"], 3);
  EXPECT_EQ(j["outputs"][0]["positions"], 6);
  EXPECT_DOUBLE_EQ(j["positions_per_second"].get<double>(), 3.0);
  testing::internal::CaptureStderr();
  r.print();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tensorize: 3 games, 6 positions, 1 skipped games, 2.00 s, 3 positions/s, 100.0 bytes/position\n"
            "  4 games read: 3 kept, 1 skipped\n"
            "  skipped for syntax: 1\n"
            "  2 duplicate positions dropped\n"
            "  stopped at --max-positions 7 (before a game that would exceed it)\n"
            "  d.h5: 6 positions\n");
}

TEST(TensorizeOptions, TheTableChecksWhatALibraryCallerFills) {
  TensorizeOptions o;
  o.pgn_files = {"a.pgn"};
  o.out = test::temp_dir("tensorize-options") + "/d.h5";
  o.threads = -1;
  EXPECT_EQ(test::error_of([&] { run_tensorize(o); }), "--threads -1 is not in 0..1024");
  o.threads = 1;
  o.out.clear();
  EXPECT_EQ(test::error_of([&] { run_tensorize(o); }),
            "give --in FILE and --out FILE.h5 (or the merge subcommand); see --help");
}

TEST(TensorizeMerge, TheRunChecksItsOptionsAndSaysWhatItJoined) {
  data::MergeOptions none;
  none.out = test::temp_dir("merge-run") + "/j.h5";
  EXPECT_EQ(test::error_of([&] { run_merge(none, false); }), "merge: no input datasets");
  none.shards = {"a.h5"};
  none.out.clear();
  EXPECT_EQ(test::error_of([&] { run_merge(none, false); }), "merge: no output: give --out FILE.h5");
}

}  // namespace
}  // namespace legalnet
