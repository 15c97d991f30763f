#include <gtest/gtest.h>

#include <vector>

#include "util/rng.h"

namespace legalnet {
namespace {

TEST(Philox, KnownAnswersOfRandom123) {
  using A4 = std::array<uint32_t, 4>;
  EXPECT_EQ(GameRng::philox({0, 0, 0, 0}, {0, 0}), (A4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(GameRng::philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (A4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(GameRng, StreamsDependOnlyOnSeedAndIndex) {
  GameRng a(7, 3), b(7, 3), c(7, 4), d(8, 3);
  for (int i = 0; i < 100; ++i) {
    const uint32_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
    EXPECT_NE(x, d.next());
  }
}

TEST(GameRng, BelowIsUniform) {
  // Chi-square over 37 buckets with 370,000 draws: 36 degrees of freedom, p = 0.001 at 67.
  GameRng rng(1, 1);
  std::vector<int> counts(37);
  for (int i = 0; i < 370000; ++i) ++counts[rng.below(37)];
  double chi2 = 0;
  for (int c : counts) chi2 += (c - 10000.0) * (c - 10000.0) / 10000.0;
  EXPECT_LT(chi2, 67.0);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(rng.below(3), 3u);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace legalnet
