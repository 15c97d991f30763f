#include "data/sparse_deflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <random>

namespace legalnet::data {
namespace {

// Inflates a raw deflate stream with zlib, as HDF5's filter does.
std::vector<unsigned char> inflate_raw(const std::vector<unsigned char>& stream, size_t size) {
  std::vector<unsigned char> out(size + 1, 0xAA);
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, -15), Z_OK);
  z.next_in = const_cast<Bytef*>(stream.data());
  z.avail_in = uInt(stream.size());
  z.next_out = out.data();
  z.avail_out = uInt(out.size());
  const int status = inflate(&z, Z_FINISH);
  EXPECT_EQ(status, Z_STREAM_END) << (z.msg ? z.msg : "");
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the end of the stream";
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

void expect_round_trip(size_t size, std::vector<uint32_t> ones) {
  std::sort(ones.begin(), ones.end());
  ones.erase(std::unique(ones.begin(), ones.end()), ones.end());
  std::vector<unsigned char> stream;
  deflate_ones(size, ones, stream);
  std::vector<unsigned char> expected(size, 0);
  for (uint32_t j : ones) expected[j] = 1;
  const auto got = inflate_raw(stream, size);
  ASSERT_EQ(got.size(), size) << ones.size() << " ones";
  EXPECT_TRUE(got == expected) << ones.size() << " ones in " << size << " bytes";
}

TEST(SparseDeflate, EdgeCasesInflateToTheBuffer) {
  for (size_t size : {1, 2, 3, 4, 5, 258, 259, 260, 261, 262, 517, 4096}) {
    expect_round_trip(size, {});
    expect_round_trip(size, {0});
    expect_round_trip(size, {uint32_t(size - 1)});
    std::vector<uint32_t> all(size);
    for (size_t i = 0; i < size; ++i) all[i] = uint32_t(i);
    expect_round_trip(size, all);
  }
  // Every zero-run length from 0 to 600 between two ones: the split of runs into copies.
  for (uint32_t gap = 0; gap <= 600; ++gap) expect_round_trip(gap + 3, {0, gap + 1});
}

TEST(SparseDeflate, RandomMasksOfEveryDensityInflateToTheBuffer) {
  std::mt19937 rng(7);
  for (double density : {0.0001, 0.003, 0.01, 0.1, 0.5, 0.9}) {
    const size_t size = 256 * 4096;  // one chunk of masks
    std::bernoulli_distribution one(density);
    std::vector<uint32_t> ones;
    for (size_t i = 0; i < size; ++i)
      if (one(rng)) ones.push_back(uint32_t(i));
    expect_round_trip(size, ones);
  }
}

TEST(SparseDeflate, SameOffsetsSameBytesAndBadOffsetsRefused) {
  std::vector<unsigned char> a, b;
  deflate_ones(4096, {3, 70, 4000}, a);
  deflate_ones(4096, {3, 70, 4000}, b);
  EXPECT_EQ(a, b);
  const auto refusal = [](uint64_t size, std::vector<uint32_t> ones) -> std::string {
    std::vector<unsigned char> out;
    try {
      deflate_ones(size, ones, out);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string unsorted = "deflate_ones: offsets not sorted, distinct and in range";
  EXPECT_EQ(refusal(4096, {70, 3}), unsorted);
  EXPECT_EQ(refusal(4096, {3, 3}), unsorted);
  EXPECT_EQ(refusal(4096, {4096}), unsorted);
  EXPECT_EQ(refusal(0, {}), "deflate_ones: empty buffer");
}

}  // namespace
}  // namespace legalnet::data
