#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "data/dataset_format.h"
#include "data/dataset_merge.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "pgn/pgn_reader.h"
#include "run/gen_moves/gen_moves.h"
#include "run/tensorize/tensorize.h"
#include "support/helpers.h"
#include "util/error.h"

namespace legalnet {
using namespace run;
namespace {

std::string make_games(const std::string& dir, uint64_t games, uint64_t seed) {
  GenMovesOptions g;
  g.games = games;
  g.seed = seed;
  g.out = dir + "/games.pgn";
  g.quiet = true;
  run_gen_moves(g);
  return g.out;
}

TensorizeReport tensorize(const std::vector<std::string>& inputs, const std::string& out, int threads = 1) {
  TensorizeOptions t;
  t.pgn_files = inputs;
  t.out = out;
  t.threads = threads;
  t.quiet = true;
  return run_tensorize(t);
}

// Every position of every game, replayed independently, in dataset row order.
std::vector<std::string> replayed_fens(const std::string& pgn) {
  std::vector<std::string> fens;
  PgnReader reader(pgn);
  PgnGame game;
  while (reader.next(game))
    replay_pgn_game(
        game, [&](const chess::Position& pos, const chess::MoveList&, chess::Move) { fens.push_back(pos.fen()); });
  return fens;
}

TEST(Dataset, RowsAreThePositionsOfTheGamesWithTheirLegalMoves) {
  const std::string dir = test::temp_dir("dataset");
  const std::string pgn = make_games(dir, 40, 12);
  const TensorizeReport s = tensorize({pgn}, dir + "/d.h5");
  const auto fens = replayed_fens(pgn);
  data::DatasetReader r(dir + "/d.h5");
  ASSERT_EQ(r.num_positions(), fens.size());
  EXPECT_EQ(s.positions, fens.size());
  EXPECT_EQ(r.num_games(), 40u);
  const uint64_t n = r.num_positions();
  std::vector<uint8_t> masks(n * encode::MOVE_INDICES);
  r.read_legal_moves(0, n, masks.data());
  const auto positions = r.read_board_positions(0, n);
  const auto played = r.read_row_column(data::PLAYED_MOVE, 0, n);
  for (uint64_t i = 0; i < n; ++i) {
    const chess::Position& pos = positions[i];
    ASSERT_EQ(pos.fen(), fens[i]) << "row " << i;
    uint8_t expected[encode::MOVE_INDICES];
    encode::encode_legal_mask(chess::MoveList(pos), expected);
    ASSERT_EQ(std::memcmp(expected, &masks[i * encode::MOVE_INDICES], encode::MOVE_INDICES), 0) << "row " << i;
    ASSERT_EQ(masks[i * encode::MOVE_INDICES + uint64_t(played[i])], 1);
  }
  // The games table points at the rows, and names where each game came from.
  const auto first = r.read_game_column(data::GAME_FIRST_ROW);
  const auto rows = r.read_game_column(data::GAME_NUM_ROWS);
  const auto number = r.read_game_column(data::GAME_SOURCE_NUMBER);
  for (size_t g = 0; g < 40; ++g) {
    EXPECT_EQ(number[g], int64_t(g + 1));
    if (g) {
      EXPECT_EQ(first[g], first[g - 1] + rows[g - 1]);
    }
  }
  EXPECT_EQ(r.string_list_attribute("sources"), std::vector<std::string>{pgn});
}

TEST(Dataset, MasksAgreeWithStockfishOnThousandsOfPositions) {
  const std::string dir = test::temp_dir("sfmask");
  tensorize({make_games(dir, 12, 99)}, dir + "/d.h5");
  data::DatasetReader r(dir + "/d.h5");
  const uint64_t n = std::min<uint64_t>(r.num_positions(), 3000);
  ASSERT_GE(n, 2500u);
  std::vector<uint8_t> masks(n * encode::MOVE_INDICES);
  r.read_legal_moves(0, n, masks.data());
  std::vector<std::string> fens;
  for (const auto& pos : r.read_board_positions(0, n)) fens.push_back(pos.fen());
  const auto sf = test::stockfish_perft(fens, 1);
  ASSERT_EQ(sf.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    std::set<int> theirs, ours;
    for (const auto& line : sf[i].moves) {
      const int from = (line[0] - 'a') + 8 * (line[1] - '1'), to = (line[2] - 'a') + 8 * (line[3] - '1');
      theirs.insert(from * 64 + to);
    }
    for (int k = 0; k < encode::MOVE_INDICES; ++k)
      if (masks[i * encode::MOVE_INDICES + k]) ours.insert(k);
    ASSERT_EQ(ours, theirs) << fens[i];
  }
}

TEST(Dataset, ReadableWithH5pyFromDebiansPython) {
  const std::string dir = test::temp_dir("h5py");
  const std::string pgn = make_games(dir, 5, 4);
  tensorize({pgn}, dir + "/d.h5");
  std::ofstream expected(dir + "/fens.txt");
  for (const auto& fen : replayed_fens(pgn)) expected << fen << "\n";
  expected.close();
  const std::string out = test::run_command(test::python_path() + " " + LEGALNET_TEST_SOURCE_DIR +
                                            "/data/check_dataset.py " + dir + "/d.h5 " + dir + "/fens.txt");
  EXPECT_EQ(out.rfind("ok: ", 0), 0u) << out;
}

TEST(Dataset, ContentDoesNotDependOnThreadsAndRepeatsByteForByte) {
  const std::string dir = test::temp_dir("threads");
  const std::string pgn = make_games(dir, 25, 5);
  tensorize({pgn}, dir + "/a.h5", 1);
  const std::string first = test::read_file(dir + "/a.h5");
  tensorize({pgn}, dir + "/a.h5", 1);
  EXPECT_EQ(test::read_file(dir + "/a.h5"), first);
  tensorize({pgn}, dir + "/b.h5", 3);
  data::DatasetReader a(dir + "/a.h5"), b(dir + "/b.h5");
  ASSERT_EQ(a.num_positions(), b.num_positions());
  const uint64_t n = a.num_positions();
  std::vector<uint8_t> ma(n * encode::MOVE_INDICES), mb(n * encode::MOVE_INDICES);
  a.read_legal_moves(0, n, ma.data());
  b.read_legal_moves(0, n, mb.data());
  EXPECT_EQ(ma, mb);
  EXPECT_EQ(a.read_row_column(data::PLAYED_MOVE, 0, n), b.read_row_column(data::PLAYED_MOVE, 0, n));
}

TEST(Dataset, SplitDedupeFinalPositionsAndMaxPositions) {
  const std::string dir = test::temp_dir("options");
  const std::string pgn = make_games(dir, 50, 6);
  TensorizeOptions t;
  t.pgn_files = {pgn};
  t.out = dir + "/s.h5";
  t.quiet = true;
  t.split = {0.6, 0.4};
  t.split_seed = 3;
  run_tensorize(t);
  data::DatasetReader train(dir + "/s.train.h5"), val(dir + "/s.val.h5");
  EXPECT_EQ(train.num_games() + val.num_games(), 50u);
  EXPECT_GT(val.num_games(), 5u);
  std::set<int64_t> games;
  for (auto g : train.read_game_column(data::GAME_SOURCE_NUMBER)) games.insert(g);
  for (auto g : val.read_game_column(data::GAME_SOURCE_NUMBER)) EXPECT_TRUE(games.insert(g).second) << "game in both";
  EXPECT_EQ(val.string_attribute("split"), "val");

  t.split.clear();
  t.out = dir + "/d.h5";
  t.dedupe = true;
  const TensorizeReport deduped = run_tensorize(t);
  EXPECT_GT(deduped.dropped_duplicates, 49u);  // the start position, at least
  data::DatasetReader d(dir + "/d.h5");
  const auto first = d.read_row_column(data::PLY, 0, d.num_positions());
  EXPECT_EQ(std::count(first.begin(), first.end(), 0), 1);

  t.dedupe = false;
  t.include_final = true;
  t.out = dir + "/f.h5";
  run_tensorize(t);
  data::DatasetReader f(dir + "/f.h5");
  const auto played = f.read_row_column(data::PLAYED_MOVE, 0, f.num_positions());
  EXPECT_EQ(std::count(played.begin(), played.end(), -1), 50);

  t.include_final = false;
  t.max_positions = 1000;
  t.out = dir + "/m.h5";
  const TensorizeReport capped = run_tensorize(t);
  EXPECT_TRUE(capped.stopped_at_max_positions);
  data::DatasetReader m(dir + "/m.h5");
  EXPECT_LE(m.num_positions(), 1000u);
  const auto rows = m.read_game_column(data::GAME_NUM_ROWS);
  const auto plies = m.read_game_column(data::GAME_PLIES);
  EXPECT_EQ(rows, plies);  // whole games only
}

TEST(Dataset, BadGamesAreSkippedOrFatalWithStrict) {
  const std::string dir = test::temp_dir("badgames");
  std::ofstream(dir + "/bad.pgn") << "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. e4 e4 *\n\n"
                                     "[Event \"c\"]\n\n1. d4 *\n";
  TensorizeOptions t;
  t.pgn_files = {dir + "/bad.pgn"};
  t.out = dir + "/d.h5";
  t.quiet = true;
  const TensorizeReport s = run_tensorize(t);
  EXPECT_EQ(s.games, 2u);
  EXPECT_EQ(s.skipped_games, 1u);
  EXPECT_EQ(s.positions, 4u);
  t.strict = true;
  t.out = dir + "/strict.h5";
  try {
    run_tensorize(t);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir +
                                         "/bad.pgn: game 2 (line 5): line 7, ply 2: move 'e4': illegal in "
                                         "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/strict.h5"));
  t.pgn_files.push_back(dir + "/missing.pgn");
  t.strict = false;
  EXPECT_EQ(test::error_of([&] { run_tensorize(t); }),
            "cannot open '" + dir + "/missing.pgn': No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(dir + "/strict.h5"));
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// The real-world corpus through the tool: one bad game never costs a file, and the summary
// reconciles games read = kept + skipped, by reason, with the corpus's own expectations.
TEST(Dataset, TensorizeTheCorpusCountsEveryGameAndKeepsEveryGoodOne) {
  const std::string dir = test::temp_dir("corpus");
  const std::string corpus = std::string(LEGALNET_TEST_SOURCE_DIR) + "/pgn/corpus";
  std::string inputs;
  uint64_t kept = 0, read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    inputs += " --in " + entry.path().string();
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    first = first.substr(0, first.find('\r'));
    read += std::stoull(first.substr(first.find("read=") + 5));
    kept += std::stoull(first.substr(first.find("kept=") + 5));
  }
  test::run_command(test::bin_dir() + "/tensorize -q" + inputs + " --out " + dir + "/c.h5 --report " + dir +
                    "/stats.json 2>/dev/null");
  const auto stats = nlohmann::json::parse(test::read_file(dir + "/stats.json"));
  EXPECT_EQ(stats["games_read"].get<uint64_t>(), read);
  EXPECT_EQ(stats["games_kept"].get<uint64_t>(), kept);
  EXPECT_EQ(stats["games_skipped"].get<uint64_t>(), read - kept);
  EXPECT_EQ(stats["skipped_by_reason"]["variant Chess960"].get<uint64_t>(), 2u);
  EXPECT_EQ(stats["skipped_by_reason"]["variant Atomic"].get<uint64_t>(), 1u);
  EXPECT_EQ(stats["games_with_notes"].get<uint64_t>(), 1u);
  data::DatasetReader reader(dir + "/c.h5");
  EXPECT_EQ(reader.num_games(), kept);
  EXPECT_EQ(stats["positions"].get<uint64_t>(), reader.num_positions());
}

TEST(Dataset, MergedShardsReadLikeTheUnshardedDataset) {
  const std::string dir = test::temp_dir("merge");
  std::filesystem::create_directories(dir + "/shards");
  std::vector<std::string> shards;
  for (int k = 0; k < 3; ++k) {
    GenMovesOptions g;
    g.games = 10;
    g.seed = 8;
    g.shard = k;
    g.num_shards = 3;
    g.quiet = true;
    g.out = dir + "/shards/s" + std::to_string(k) + ".pgn";
    run_gen_moves(g);
    shards.push_back(dir + "/shards/s" + std::to_string(k) + ".h5");
    tensorize({g.out}, shards.back());
  }
  tensorize({make_games(dir, 10, 8)}, dir + "/all.h5");
  for (bool copy : {false, true}) {
    data::MergeOptions m;
    m.shards = shards;
    // A joined file reads its shards from its own folder only: it goes beside them.
    m.out = dir + (copy ? "/copied.h5" : "/shards/joined.h5");
    m.copy = copy;
    data::merge_datasets(m);
    data::DatasetReader all(dir + "/all.h5"), joined(m.out);
    ASSERT_EQ(joined.num_positions(), all.num_positions());
    ASSERT_EQ(joined.num_games(), 10u);
    const uint64_t n = all.num_positions();
    std::vector<int8_t> pa(n * encode::POSITION_SIZE), pj(n * encode::POSITION_SIZE);
    all.read_positions(0, n, pa.data());
    joined.read_positions(0, n, pj.data());
    EXPECT_EQ(pa, pj);
    for (const char* column : {data::GAME, data::PLY, data::PLAYED_MOVE, data::CASTLING})
      EXPECT_EQ(all.read_row_column(column, 0, n), joined.read_row_column(column, 0, n)) << column;
    EXPECT_EQ(all.read_game_column(data::GAME_FIRST_ROW), joined.read_game_column(data::GAME_FIRST_ROW));
    EXPECT_EQ(joined.string_list_attribute("merged_from"), shards);
  }
  // h5py reads the virtual file like any other, from another working directory.
  const std::string out =
      test::run_command("cd / && " + test::python_path() + " -c \"import h5py; f = h5py.File('" + dir +
                        "/shards/joined.h5'); print(f['positions'].is_virtual, f['legal_moves'][:].sum() > 0)\"");
  EXPECT_EQ(out, "True True\n");
  // A shard that goes missing later is an error, not rows of zeros.
  std::filesystem::rename(shards[1], dir + "/moved.h5");
  try {
    data::DatasetReader r(dir + "/shards/joined.h5");
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir + "/shards/joined.h5: dataset 'positions' is joined from 's1.h5', which is missing");
  }
  data::MergeOptions missing;
  missing.shards = shards;
  missing.out = dir + "/shards/never.h5";
  EXPECT_NE(test::error_of([&] { data::merge_datasets(missing); }).find("cannot open"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing.out));
}

std::string open_error(const std::string& path) {
  try {
    data::DatasetReader r(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "opened";
}

TEST(Dataset, TruncatedForeignAndMismatchedFilesAreRefusedClearly) {
  const std::string dir = test::temp_dir("corrupt");
  tensorize({make_games(dir, 3, 1)}, dir + "/d.h5");
  const std::string bytes = test::read_file(dir + "/d.h5");
  std::ofstream(dir + "/cut.h5", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_NE(open_error(dir + "/cut.h5").find("cut.h5: "), std::string::npos);
  std::ofstream(dir + "/text.h5") << "not hdf5";
  EXPECT_EQ(open_error(dir + "/text.h5"), dir + "/text.h5: not an HDF5 file (or truncated)");
  EXPECT_EQ(open_error(dir + "/none.h5"), dir + "/none.h5: cannot open: no such file or not readable");

  // Files made by h5py: foreign, a newer version, and the wrong dtype or shape.
  const std::string script =
      "import h5py, numpy as np, shutil, sys\n"
      "d = sys.argv[1]\n"
      "h5py.File(d + '/foreign.h5', 'w').create_dataset('x', data=np.zeros(3))\n"
      "for name in ('v2', 'dtype', 'shape'):\n"
      "    shutil.copy(d + '/d.h5', d + '/' + name + '.h5')\n"
      "with h5py.File(d + '/v2.h5', 'a') as f: f.attrs['format_version'] = 2\n"
      "with h5py.File(d + '/dtype.h5', 'a') as f:\n"
      "    n = f['ply'].shape[0]; del f['ply']; f['ply'] = np.zeros(n, dtype=np.float32)\n"
      "with h5py.File(d + '/shape.h5', 'a') as f:\n"
      "    n = f['legal_moves'].shape[0]; del f['legal_moves']; f['legal_moves'] = np.zeros((n, 64), np.uint8)\n";
  std::ofstream(dir + "/make.py") << script;
  test::run_command(test::python_path() + " " + dir + "/make.py " + dir);
  EXPECT_EQ(open_error(dir + "/foreign.h5"), dir + "/foreign.h5: not a legalnet dataset (no 'format' attribute)");
  EXPECT_EQ(open_error(dir + "/v2.h5"), dir + "/v2.h5: format version 2 is not supported (this build reads version 1)");
  EXPECT_EQ(open_error(dir + "/dtype.h5"), dir + "/dtype.h5: dataset 'ply' has the wrong type (expected int32)");
  EXPECT_EQ(open_error(dir + "/shape.h5"),
            dir + "/shape.h5: dataset 'legal_moves' has the wrong shape (expected (N, 4096))");
}

}  // namespace
}  // namespace legalnet

namespace legalnet {
namespace {

// One row of the start position as a RowBlock holds it, row 7 of file "f.h5".
data::RowBlock start_row() {
  data::RowBlock b;
  b.path = "f.h5";
  b.start = 7;
  b.count = 1;
  b.planes.resize(encode::POSITION_SIZE);
  encode::encode_planes(chess::Position(), b.planes.data());
  using data::RowColumn;
  for (RowColumn c : data::BLOCK_COLUMNS) b.columns[size_t(c)] = {0};
  b.columns[size_t(RowColumn::CASTLING)] = {15};
  b.columns[size_t(RowColumn::EN_PASSANT)] = {-1};
  b.columns[size_t(RowColumn::FULLMOVE_NUMBER)] = {1};
  return b;
}

TEST(Dataset, TheRowDecoderRefusesABadRowByFileRowAndField) {
  using data::RowColumn;
  EXPECT_EQ(start_row().position(0).fen(), std::string(chess::START_FEN));
  const auto refused = [](data::RowBlock b) { return test::error_of([&] { b.position(0); }); };
  data::RowBlock b = start_row();
  b.planes[2 * 64 + 3 * 8 + 4] = 7;
  EXPECT_EQ(refused(b), "f.h5: row 7: positions[2][3][4] is 7, not -1, 0 or +1");
  b = start_row();
  b.columns[size_t(RowColumn::CASTLING)] = {200};
  EXPECT_EQ(refused(b), "f.h5: row 7: castling is 200, not 0..15");
  b = start_row();
  b.columns[size_t(RowColumn::EN_PASSANT)] = {-2};
  EXPECT_EQ(refused(b), "f.h5: row 7: en_passant is -2, not -1..63");
  b = start_row();
  b.planes[4 * 64 + 0] = 0;  // no rook on a1
  EXPECT_EQ(refused(b),
            "f.h5: row 7: not a position: FEN field 3: castling right 'Q' but the king or rook is not on its square");
  b = start_row();
  b.planes[3 * 64 + 0] = 1;  // a bishop on a1 beside the rook
  EXPECT_EQ(refused(b), "f.h5: row 7: not a position: two pieces on square a1");
  b = start_row();
  b.columns[size_t(RowColumn::HALFMOVE_CLOCK)] = {-3};
  EXPECT_EQ(refused(b), "f.h5: row 7: not a position: FEN field 5: halfmove clock '-3' is not a number");
  b = start_row();
  b.columns[size_t(RowColumn::EN_PASSANT)] = {20};  // e3, but no pawn just double-pushed
  EXPECT_EQ(refused(b),
            "f.h5: row 7: not a position: FEN field 4: en-passant square e3 does not follow a double pawn push");
}

}  // namespace
}  // namespace legalnet
