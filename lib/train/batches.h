// Training batches assembled on a background thread, in an order fixed by (seed, epoch), so
// that a resumed run sees exactly the batches an uninterrupted one would. Two sources: rows
// held in memory (MemoryBatches) and rows streamed from the files (StreamBatches, stream.h).
#pragma once

#include <torch/torch.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "encode/encode.h"
#include "train/training_data.h"

namespace legalnet::train {

struct Batch {
  torch::Tensor planes;   // float [B,C,8,8]: the inputs of encode::write_inputs
  torch::Tensor targets;  // float [B,4096]: the legal moves in the inputs' frame (encode::write_targets)
  // float [B,P,8,8]: the rules head's targets (encode::write_rule_targets, P of its planes) in the
  // inputs' frame (train --rules-weight); undefined without.
  torch::Tensor rules = {};
};

// An empty batch of n rows of `inputs` on the CPU (pinned when `pin`), with the planes of `rules`.
Batch allocate_batch(size_t n, encode::InputKind inputs, bool pin,
                     encode::RuleTargets rules = encode::RuleTargets::NONE);

// Row i of batch b: the inputs of `state` (encode::write_inputs) and the legal moves
// [legal, legal_end) as its target in the inputs' frame (encode::write_targets), and the planes
// of `rules` (those the batch was allocated with). The one filler of the memory and stream modes.
void fill_row(Batch& b, size_t i, encode::InputKind inputs, encode::RuleTargets rules, const encode::BoardState& state,
              const uint16_t* legal, const uint16_t* legal_end);

// Expands rows [rows, rows + n) of `data` into a batch on the CPU (pinned when `pin`).
Batch make_batch(const CompactPositions& data, const uint32_t* rows, size_t n, bool pin, encode::InputKind inputs,
                 encode::RuleTargets rules = encode::RuleTargets::NONE);

// The row order of one epoch: every row RowWeights::copies times (once by default), shuffled
// (Fisher-Yates) by GameRng(seed, epoch).
std::vector<uint32_t> epoch_order(const CompactPositions& data, uint64_t seed, int64_t epoch,
                                  const RowWeights& weights = {});

// Full batches in one epoch of epoch_order.
int64_t epoch_steps(const CompactPositions& data, int batch_size, const RowWeights& weights);

// Where a process's batches come from in a data-parallel run (see each source for how the
// rows are divided); one process is rank 0 of 1.
struct BatchSlice {
  int rank = 0;
  int world_size = 1;
};

// The batches of a run, step by step. batch() is called for consecutive steps from any first
// step (a resumed run starts in the middle), on the loader's thread.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual int64_t steps_per_epoch() const = 0;
  virtual Batch batch(int64_t step, bool pin) = 0;
};

// Rows in memory. Each step takes a global batch of batch_size x world_size rows of the epoch
// order and rank r takes its r-th slice, so the union over ranks is the batch one process
// would take with batch_size x world_size.
class MemoryBatches : public BatchSource {
 public:
  MemoryBatches(const CompactPositions& data, int batch_size, uint64_t seed, const RowWeights& weights,
                BatchSlice slice, encode::InputKind inputs, encode::RuleTargets rules = encode::RuleTargets::NONE);
  int64_t steps_per_epoch() const override { return steps_per_epoch_; }
  Batch batch(int64_t step, bool pin) override;

 private:
  const CompactPositions& data_;
  const int batch_size_;
  const uint64_t seed_;
  const RowWeights weights_;
  const BatchSlice slice_;
  const encode::InputKind inputs_;
  const encode::RuleTargets rules_;
  int64_t steps_per_epoch_;
  int64_t epoch_ = -1;
  std::vector<uint32_t> order_;
};

class BatchLoader {
 public:
  // Produces the batches of steps first_step, first_step + 1, ... of `source` on a background
  // thread and moves them to `device`.
  BatchLoader(std::unique_ptr<BatchSource> source, int64_t first_step, const torch::Device& device);
  ~BatchLoader();
  Batch next();

 private:
  void produce();
  std::unique_ptr<BatchSource> source_;
  const torch::Device device_;
  int64_t next_step_;
  std::deque<Batch> queue_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace legalnet::train
