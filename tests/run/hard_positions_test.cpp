// run/train/hard_positions: the pool train --mine-share trains on, with a fake net whose mistakes
// are known: it misses every legal move in proportion to the pieces on the board.
#include <gtest/gtest.h>

#include <bit>
#include <string>
#include <vector>

#include "chess/movegen.h"
#include "encode/encode.h"
#include "eval/position_search.h"
#include "run/train/hard_positions.h"
#include "util/error.h"

namespace legalnet::run {
namespace {

// Each legal move at 1 - pieces/32, nothing on illegal ones: the worst margin is pieces/32, so a
// climb on it crowds the board.
void crowd_blind(const std::vector<const chess::Position*>& positions, std::vector<float>& probs) {
  probs.assign(positions.size() * encode::MOVE_INDICES, 0.0f);
  for (size_t i = 0; i < positions.size(); ++i) {
    const float p = 1.0f - float(std::popcount(positions[i]->pieces())) / 32.0f;
    for (chess::Move m : chess::MoveList(*positions[i]))
      probs[i * encode::MOVE_INDICES + size_t(encode::move_index(m))] = p;
  }
}

MiningOptions options() { return {.share = 0.25, .every = 10, .pool = 64, .seed = 7}; }

TEST(HardPositions, TheClimbMovesTowardsTheNetsMistakes) {
  HardPositions pool(options());
  pool.refresh(0, crowd_blind);
  const double first = pool.figures().mean_margin;
  for (int64_t step = 10; step <= 40; step += 10) pool.refresh(step, crowd_blind);
  EXPECT_GT(pool.figures().mean_margin, first + 0.02) << "from " << first;
  EXPECT_EQ(pool.figures().refreshes, 5);
  // Every position of the pool is one the rules accept (its FEN set up again).
  std::string text = pool.text();
  size_t lines = 0;
  for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 64u);
}

TEST(HardPositions, TheSameStepsAndNetGiveTheSamePoolAndARestoredPoolContinuesIt) {
  HardPositions a(options()), b(options());
  for (int64_t step = 0; step <= 30; step += 10) a.refresh(step, crowd_blind);
  for (int64_t step = 0; step <= 20; step += 10) b.refresh(step, crowd_blind);
  HardPositions resumed(options());
  resumed.restore(b.text(), "checkpoint.safetensors");
  resumed.refresh(30, crowd_blind);
  EXPECT_EQ(resumed.text(), a.text());
  // The draws: a function of the step and the process, k of the pool's positions.
  const auto d1 = a.draw(31, 0, 16), d2 = resumed.draw(31, 0, 16), d3 = a.draw(31, 1, 16);
  ASSERT_EQ(d1.size(), 16u);
  std::vector<std::string> f1, f2, f3;
  for (size_t i = 0; i < 16; ++i) f1.push_back(d1[i]->fen()), f2.push_back(d2[i]->fen()), f3.push_back(d3[i]->fen());
  EXPECT_EQ(f1, f2);
  EXPECT_NE(f1, f3);
}

TEST(HardPositions, APoolThatIsNotTheRunsIsRefusedNamingTheLine) {
  HardPositions pool(options());
  pool.refresh(0, crowd_blind);
  std::string text = pool.text();
  HardPositions smaller({.share = 0.25, .every = 10, .pool = 8, .seed = 7});
  EXPECT_THROW(
      {
        try {
          smaller.restore(text, "ck.safetensors");
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "ck.safetensors: 64 mined positions, where --mine-pool asks for 8");
          throw;
        }
      },
      Error);
  text.replace(0, text.find('\n'), "8/8/8/8/8/8/8/8 w - - 0 1");  // no kings
  try {
    pool.restore(text, "ck.safetensors");
    ADD_FAILURE() << "a kingless position restored";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("ck.safetensors: mined position 1: ", 0), 0u) << e.what();
  }
}

TEST(HardPositions, AShareIsAtLeastOneRowAndLeavesOneOfTheData) {
  EXPECT_EQ(HardPositions::rows_of(0.125, 128), 16);
  EXPECT_EQ(HardPositions::rows_of(0.001, 128), 1);
  EXPECT_EQ(HardPositions::rows_of(0.5, 2), 1);
  EXPECT_EQ(HardPositions::rows_of(0.5, 1), 1);
}

}  // namespace
}  // namespace legalnet::run
