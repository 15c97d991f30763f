// Differential test: our legal moves and perft counts against Stockfish's, on positions from
// seeded random games.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "chess/notation.h"
#include "chess/perft.h"
#include "support/helpers.h"

namespace legalnet::chess {
namespace {

using test::stockfish_perft;

std::vector<std::string> our_divide(const std::string& fen, int depth) {
  Position pos(fen);
  std::vector<std::string> lines;
  for (const auto& [m, n] : perft_divide(pos, depth)) lines.push_back(to_uci(m) + ": " + std::to_string(n));
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(StockfishDiff, LegalMovesOf2000RandomGamePositions) {
  const auto fens = test::sample_fens(/*seed=*/2024, 2000);
  const auto sf = stockfish_perft(fens, 1);
  ASSERT_EQ(sf.size(), fens.size());

  // The sample must exercise every special rule, or agreeing proves little.
  int en_passant = 0, promotions = 0, castling = 0, checks = 0, pins = 0;
  for (size_t i = 0; i < fens.size(); ++i) {
    EXPECT_EQ(our_divide(fens[i], 1), sf[i].moves) << fens[i];
    Position pos(fens[i]);
    const MoveList legal(pos);
    for (Move m : legal) {
      en_passant += m.kind() == MoveKind::EN_PASSANT;
      promotions += m.kind() == MoveKind::PROMOTION;
      castling += m.kind() == MoveKind::CASTLING;
    }
    checks += pos.in_check();
    pins += test::has_pinned_piece(pos);
  }
  EXPECT_GE(en_passant, 10);
  EXPECT_GE(promotions, 100);
  EXPECT_GE(castling, 50);
  EXPECT_GE(checks, 100);
  EXPECT_GE(pins, 100);
}

TEST(StockfishDiff, Perft3Of150RandomGamePositions) {
  const auto fens = test::sample_fens(/*seed=*/77, 150);
  const auto sf = stockfish_perft(fens, 3);
  ASSERT_EQ(sf.size(), fens.size());
  for (size_t i = 0; i < fens.size(); ++i) {
    Position pos(fens[i]);
    EXPECT_EQ(perft(pos, 3), sf[i].nodes) << fens[i];
  }
}

TEST(StockfishDiff, PerftCommandPrintsStockfishDivideFormat) {
  const std::string fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
  const std::string ours = test::run_command(test::bin_dir() + "/gen_moves perft --depth 2 --fen '" + fen + "'");
  const auto sf = stockfish_perft({fen}, 2);
  std::vector<std::string> lines;
  std::istringstream in(ours);
  std::string line;
  while (std::getline(in, line) && !line.empty()) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, sf[0].moves);
  std::getline(in, line);
  EXPECT_EQ(line, "Nodes searched: " + std::to_string(sf[0].nodes));
}

}  // namespace
}  // namespace legalnet::chess
