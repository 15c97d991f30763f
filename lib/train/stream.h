// Training rows streamed from the dataset files as training goes, for datasets larger than
// memory. The files are cut into blocks of contiguous rows (read fast: whole compressed
// chunks), block b belongs to rank b mod world_size, so each rank reads only its part; each
// epoch a rank reads its blocks in an order shuffled by (seed, epoch, rank) and passes the rows
// through a shuffle buffer: a full buffer emits a random resident row for each row read, then
// drains in random order at the end of the epoch. Memory: the buffer, not the dataset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "train/batches.h"
#include "util/rng.h"

namespace legalnet::data {
class DatasetReader;
}

namespace legalnet::train {

struct StreamOptions {
  std::vector<std::string> paths;  // opened by the stream unless it is given them open
  int batch_size = 256;            // per rank
  uint64_t seed = 0;
  RowWeights weights;                 // rows in check or with a rare move enter the stream this many times
  int position_ply_limit = 0;         // rows with ply >= this are skipped (0: none; within_ply_limit)
  double val_fraction = 0;            // rows of games held out by is_validation_game are skipped
  uint64_t shuffle_buffer = 1 << 18;  // rows resident in the shuffle buffer
  uint64_t block_rows = 8192;         // rows per block, a multiple of the files' 256-row chunks
  encode::InputKind inputs = encode::InputKind::STATE;    // ModelConfig::inputs, and its default
  encode::RuleTargets rules = encode::RuleTargets::NONE;  // the batches' rule planes (Batch::rules)
  BatchSlice slice;
};

class StreamBatches : public BatchSource {
 public:
  // Opens the files and counts this rank's rows: one pass over its blocks' game and ply
  // columns, and over their positions too when rows repeat (to find the rows in check or rare).
  explicit StreamBatches(const StreamOptions& options);
  // The same over the files already open (options.paths unused).
  StreamBatches(const StreamOptions& options, std::vector<data::DatasetReader> readers);
  ~StreamBatches() override;

  uint64_t rows() const { return rows_; }                      // this rank's rows, once each
  uint64_t rows_per_epoch() const { return rows_per_epoch_; }  // with the repeated rows in check
  // The ranks must take the same number of steps: the trainer sets the minimum over ranks
  // (all ranks then fail together when one has too few rows). Throws when steps < 1 or more
  // than this rank's rows allow. Default: this rank's rows_per_epoch() / batch_size.
  void set_steps_per_epoch(int64_t steps);
  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch batch(int64_t step, bool pin) override;

 private:
  struct Row {
    encode::BoardState state;
    std::vector<uint16_t> legal;
  };
  struct Block {
    size_t file;
    uint64_t start, count;
  };
  void start_epoch(int64_t epoch);
  bool next_row();  // the next row of the epoch's stream into emitted_; false when exhausted
  // Whether a game's rows train (not held out for validation).
  bool trains_on(int64_t game) const;
  // The training rows of a block (within the ply limit, games that train).
  void read_block(const Block& b, CompactPositions& out) const;
  void read_next_block();

  StreamOptions options_;
  std::vector<data::DatasetReader> readers_;
  std::vector<int64_t> game_offsets_;  // the first game number of each file
  std::vector<Block> blocks_;          // this rank's blocks
  uint64_t rows_ = 0, rows_per_epoch_ = 0;
  int64_t steps_per_epoch_ = 0;

  // Where the stream stands: the step batch() will produce next, the epoch, the blocks read
  // so far, the rows of the current block (each row RowWeights::copies times), the buffer.
  int64_t next_step_ = -1;
  int64_t epoch_ = -1;
  GameRng rng_{0, 0};
  std::vector<size_t> block_order_;
  size_t blocks_read_ = 0;
  CompactPositions pending_;
  size_t pending_row_ = 0;
  int pending_copy_ = 0;
  std::vector<Row> buffer_;
  Row incoming_, emitted_;
};

// The first `max_rows` rows (within_ply_limit) of the games held out by is_validation_game,
// read from the start of the files: the validation set of a streamed run without --val.
CompactPositions streamed_validation_rows(const std::vector<data::DatasetReader>& readers, double fraction,
                                          uint64_t seed, int position_ply_limit, uint64_t max_rows);

}  // namespace legalnet::train
