// train/stream: batches read from the files through a shuffle buffer.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "train/batches.h"
#include "train/fixtures.h"
#include "train/stream.h"

namespace legalnet::train {
namespace {

using test::first_rows;
using test::tiny_dataset;
using test::weights_of;

// Each row of a batch as bytes, to compare the rows of two sources as multisets.
std::vector<std::string> row_keys(const Batch& b) {
  std::vector<std::string> keys;
  for (int64_t i = 0; i < b.planes.size(0); ++i) {
    const auto planes = b.planes[i].contiguous(), mask = b.targets[i].contiguous();
    keys.push_back(std::string(static_cast<const char*>(planes.data_ptr()), size_t(planes.numel()) * 4) +
                   std::string(static_cast<const char*>(mask.data_ptr()), size_t(mask.numel()) * 4));
  }
  return keys;
}

// Every row of the dataset (each RowWeights::copies times), as row_keys.
std::multiset<std::string> all_row_keys(const RowWeights& weights) {
  const CompactPositions rows = first_rows(/*max_rows=*/0);  // 0: all
  std::multiset<std::string> keys;
  for (uint32_t r = 0; r < rows.size(); ++r)
    for (int c = 0; c < weights.copies(rows, r); ++c)
      keys.insert(row_keys(make_batch(rows, &r, 1, false, encode::InputKind::PLANES))[0]);
  return keys;
}

StreamOptions tiny_stream(const RowWeights& weights, BatchSlice slice = {}) {
  StreamOptions o;
  o.paths = {tiny_dataset()};
  o.batch_size = 1;
  o.seed = 9;
  o.weights = weights;
  o.shuffle_buffer = 50;  // far fewer than the rows, so rows pass through it
  o.block_rows = 256;     // several blocks
  o.slice = slice;
  o.inputs = encode::InputKind::PLANES;  // as all_row_keys builds them
  return o;
}

// One epoch of a stream, batch by batch.
std::vector<std::string> stream_epoch(StreamBatches& stream, int64_t epoch) {
  std::vector<std::string> keys;
  for (int64_t step = epoch * stream.steps_per_epoch(); step < (epoch + 1) * stream.steps_per_epoch(); ++step)
    for (auto& k : row_keys(stream.batch(step, false))) keys.push_back(std::move(k));
  return keys;
}

TEST(Stream, AnEpochPassesEveryRowOnceInAShuffledOrder) {
  for (const RowWeights weights : {weights_of(1, 1), weights_of(3, 2), weights_of(1, 1, 4)}) {
    StreamBatches stream(tiny_stream(weights));
    const auto expected = all_row_keys(weights);
    ASSERT_EQ(stream.rows_per_epoch(), expected.size());
    const auto first = stream_epoch(stream, 0), second = stream_epoch(stream, 1);
    EXPECT_EQ(std::multiset<std::string>(first.begin(), first.end()), expected)
        << "weights in check " << weights.weight[chess::SIT_IN_CHECK] << ", castling "
        << weights.weight[chess::SIT_CASTLING] << ", pinned " << weights.weight[chess::SIT_PINNED_PIECE];
    EXPECT_EQ(std::multiset<std::string>(second.begin(), second.end()), expected);
    EXPECT_NE(first, second) << "two epochs in the same order";
    EXPECT_NE(first, std::vector<std::string>(expected.begin(), expected.end())) << "not shuffled";
    StreamBatches again(tiny_stream(weights));
    EXPECT_EQ(stream_epoch(again, 0), first) << "not reproducible";
  }
}

TEST(Stream, RanksReadDisjointPartsThatMakeTheWhole) {
  StreamBatches rank0(tiny_stream({}, {0, 2})), rank1(tiny_stream({}, {1, 2}));
  const auto a = stream_epoch(rank0, 0), b = stream_epoch(rank1, 0);
  std::multiset<std::string> both(a.begin(), a.end());
  both.insert(b.begin(), b.end());
  EXPECT_EQ(both, all_row_keys({}));
  EXPECT_GT(a.size(), 0u);
  EXPECT_GT(b.size(), 0u);
}

TEST(Stream, AStreamStartedMidwayContinuesAsTheUninterruptedOne) {
  StreamOptions o = tiny_stream(weights_of(2, 1));
  o.batch_size = 16;
  StreamBatches straight(o), resumed(o);
  const int64_t steps = straight.steps_per_epoch();
  std::vector<std::vector<std::string>> expected;
  for (int64_t step = 0; step < steps + 5; ++step) expected.push_back(row_keys(straight.batch(step, false)));
  for (int64_t start : {int64_t(3), steps + 2}) {
    StreamBatches fresh(o);
    for (int64_t s = start; s < start + 2; ++s)
      EXPECT_EQ(row_keys(fresh.batch(s, false)), expected[size_t(s)]) << "started at " << start;
  }
  for (int64_t s = steps - 2; s < steps + 5; ++s) EXPECT_EQ(row_keys(resumed.batch(s, false)), expected[size_t(s)]);
}

}  // namespace
}  // namespace legalnet::train
