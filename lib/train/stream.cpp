#include "train/stream.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "data/dataset_format.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "util/error.h"

namespace legalnet::train {

namespace {
constexpr uint64_t STREAM_TAG = 0x57AEA3ULL << 40;  // keeps the stream's random numbers apart from others
}

StreamBatches::StreamBatches(const StreamOptions& o) : StreamBatches(o, data::open_readers(o.paths)) {}

StreamBatches::StreamBatches(const StreamOptions& o, std::vector<data::DatasetReader> readers)
    : options_(o), readers_(std::move(readers)) {
  if (o.block_rows == 0 || o.block_rows % 256) throw Error("stream: the block size must be a multiple of 256 rows");
  if (o.shuffle_buffer == 0) throw Error("--shuffle-buffer must be at least 1");
  int64_t game_offset = 0;
  size_t block_number = 0;
  for (size_t f = 0; f < readers_.size(); ++f) {
    game_offsets_.push_back(game_offset);
    game_offset += int64_t(readers_.back().num_games());
    const uint64_t n = readers_.back().num_positions();
    for (uint64_t start = 0; start < n; start += o.block_rows, ++block_number)
      if (int(block_number % size_t(o.slice.world_size)) == o.slice.rank)
        blocks_.push_back({f, start, std::min(o.block_rows, n - start)});
  }

  // Count this rank's rows. Only repeated rows need the positions; the rest is two columns.
  for (const Block& b : blocks_) {
    const auto& reader = readers_[b.file];
    if (o.weights.repeats_any()) {
      CompactPositions rows;
      read_block(b, rows);
      rows_ += rows.size();
      for (size_t r = 0; r < rows.size(); ++r) rows_per_epoch_ += uint64_t(o.weights.copies(rows, r));
      continue;
    }
    const auto games = reader.read_row_column(data::GAME, b.start, b.count);
    const auto plies = reader.read_row_column(data::PLY, b.start, b.count);
    for (uint64_t i = 0; i < b.count; ++i)
      if (within_ply_limit(plies[i], o.position_ply_limit) && trains_on(game_offsets_[b.file] + games[i])) ++rows_;
    rows_per_epoch_ = rows_;
  }
  steps_per_epoch_ = int64_t(rows_per_epoch_ / uint64_t(o.batch_size));  // checked by set_steps_per_epoch and batch()
}

StreamBatches::~StreamBatches() = default;

void StreamBatches::set_steps_per_epoch(int64_t steps) {
  if (steps <= 0)
    throw Error(fmt::format("the streamed training set has {} positions for rank {} of {}, fewer than one batch of {}",
                            rows_per_epoch_, options_.slice.rank, options_.slice.world_size, options_.batch_size));
  if (uint64_t(steps) * uint64_t(options_.batch_size) > rows_per_epoch_)
    throw Error("stream: more steps per epoch than rows");
  steps_per_epoch_ = steps;
}

void StreamBatches::start_epoch(int64_t epoch) {
  epoch_ = epoch;
  rng_ = GameRng(options_.seed ^ STREAM_TAG, uint64_t(epoch) * 65536 + uint64_t(options_.slice.rank));
  block_order_.resize(blocks_.size());
  std::iota(block_order_.begin(), block_order_.end(), size_t(0));
  for (size_t i = block_order_.size(); i > 1; --i)
    std::swap(block_order_[i - 1], block_order_[rng_.below(uint32_t(i))]);
  blocks_read_ = 0;
  pending_ = CompactPositions();
  pending_row_ = 0;
  pending_copy_ = 0;
  buffer_.clear();
  buffer_.reserve(size_t(std::min<uint64_t>(options_.shuffle_buffer, rows_per_epoch_)));
}

bool StreamBatches::trains_on(int64_t game) const {
  return !is_validation_game(game, options_.val_fraction, options_.seed);
}

void StreamBatches::read_block(const Block& b, CompactPositions& out) const {
  read_rows(
      readers_[b.file], b.start, b.count, game_offsets_[b.file], options_.position_ply_limit,
      [this](int64_t game) { return trains_on(game); }, out);
}

void StreamBatches::read_next_block() {
  pending_ = CompactPositions();
  read_block(blocks_[block_order_[blocks_read_++]], pending_);
  pending_row_ = 0;
  pending_copy_ = 0;
}

bool StreamBatches::next_row() {
  for (;;) {
    if (pending_row_ < pending_.size()) {
      // The next incoming row: repeated rows come RowWeights::copies times in a row; the
      // buffer scatters the copies.
      const size_t r = pending_row_;
      incoming_.state = pending_.state(r);
      incoming_.legal.assign(pending_.legal.begin() + long(pending_.legal_begin[r]),
                             pending_.legal.begin() + long(pending_.legal_begin[r + 1]));
      const int copies = options_.weights.copies(pending_, r);
      if (++pending_copy_ >= copies) {
        ++pending_row_;
        pending_copy_ = 0;
      }
      if (buffer_.size() < options_.shuffle_buffer) {
        buffer_.push_back(incoming_);
        continue;
      }
      Row& resident = buffer_[rng_.below(uint32_t(buffer_.size()))];
      std::swap(emitted_, resident);
      std::swap(resident, incoming_);
      return true;
    }
    if (blocks_read_ < block_order_.size()) {
      read_next_block();
      continue;
    }
    if (buffer_.empty()) return false;
    // The end of the epoch: the buffer drains in random order.
    Row& picked = buffer_[rng_.below(uint32_t(buffer_.size()))];
    std::swap(emitted_, picked);
    std::swap(picked, buffer_.back());
    buffer_.pop_back();
    return true;
  }
}

Batch StreamBatches::batch(int64_t step, bool pin) {
  if (steps_per_epoch_ <= 0) set_steps_per_epoch(steps_per_epoch_);  // throws the clear message
  if (step != next_step_) {
    // The first batch (of a run, or of a resumed one): replay this epoch's stream up to it.
    start_epoch(step / steps_per_epoch_);
    for (int64_t skip = (step % steps_per_epoch_) * options_.batch_size; skip > 0; --skip)
      if (!next_row()) throw Error("stream: the epoch ended early (a dataset changed during the run?)");
  } else if (step / steps_per_epoch_ != epoch_) {
    start_epoch(step / steps_per_epoch_);
  }
  Batch b = allocate_batch(size_t(options_.batch_size), options_.inputs, pin, options_.rules);
  for (size_t i = 0; i < size_t(options_.batch_size); ++i) {
    if (!next_row()) throw Error("stream: the epoch ended early (a dataset changed during the run?)");
    fill_row(b, i, options_.inputs, options_.rules, emitted_.state, emitted_.legal.data(),
             emitted_.legal.data() + emitted_.legal.size());
  }
  next_step_ = step + 1;
  return b;
}

CompactPositions streamed_validation_rows(const std::vector<data::DatasetReader>& readers, double fraction,
                                          uint64_t seed, int position_ply_limit, uint64_t max_rows) {
  CompactPositions rows;
  data::for_each_row_slice(readers, [&](const data::RowSlice& s) {
    if (rows.size() >= max_rows) return false;
    read_rows(
        s.reader, s.start, s.count, s.game_offset, position_ply_limit,
        [&](int64_t game) { return is_validation_game(game, fraction, seed); }, rows);
    return true;
  });
  rows.keep_first(max_rows);
  return rows;
}

}  // namespace legalnet::train
