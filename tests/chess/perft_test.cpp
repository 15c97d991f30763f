#include <gtest/gtest.h>

#include "chess/perft.h"

namespace legalnet::chess {
namespace {

class Perft : public testing::TestWithParam<PerftCase> {};

TEST_P(Perft, MatchesPublishedCount) {
  Position pos(GetParam().fen);
  const std::string fen_before = pos.fen();
  const uint64_t key_before = pos.key();
  EXPECT_EQ(perft(pos, GetParam().depth), GetParam().nodes) << GetParam().fen;
  // make/unmake restores the position exactly
  EXPECT_EQ(pos.fen(), fen_before);
  EXPECT_EQ(pos.key(), key_before);
}

INSTANTIATE_TEST_SUITE_P(Positions, Perft, testing::ValuesIn(PERFT_SUITE), [](const auto& info) {
  return "case" + std::to_string(info.index) + "_depth" + std::to_string(info.param.depth);
});

TEST(PerftDivide, SumsToPerft) {
  Position pos("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
  uint64_t total = 0;
  const auto divide = perft_divide(pos, 3);
  for (const auto& entry : divide) total += entry.second;
  EXPECT_EQ(divide.size(), 48u);
  EXPECT_EQ(total, 97862u);
}

}  // namespace
}  // namespace legalnet::chess
