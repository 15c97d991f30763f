#include "train/batches.h"

#include "encode/attack_planes.h"
#include "encode/encode.h"
#include "encode/inputs.h"
#include "util/error.h"
#include "util/rng.h"

namespace legalnet::train {

constexpr size_t QUEUE_DEPTH = 4;

Batch allocate_batch(size_t n, encode::InputKind inputs, bool pin, encode::RuleTargets rules) {
  auto options = torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(pin);
  return {torch::empty({int64_t(n), encode::input_spec(inputs).planes, 8, 8}, options),
          torch::empty({int64_t(n), encode::MOVE_INDICES}, options),
          rules != encode::RuleTargets::NONE
              ? torch::empty({int64_t(n), encode::rule_target_planes(rules), 8, 8}, options)
              : torch::Tensor()};
}

void fill_row(Batch& b, size_t i, encode::InputKind inputs, encode::RuleTargets rules, const encode::BoardState& state,
              const uint16_t* legal, const uint16_t* legal_end) {
  const size_t row_floats = size_t(encode::input_spec(inputs).planes) * encode::PLANE_SIZE;
  encode::write_inputs(inputs, state, b.planes.data_ptr<float>() + i * row_floats);
  encode::write_targets(inputs, state.side, legal, legal_end, b.targets.data_ptr<float>() + i * encode::MOVE_INDICES);
  if (rules != encode::RuleTargets::NONE)
    encode::write_rule_targets(rules, state, encode::input_spec(inputs).mover_frame,
                               b.rules.data_ptr<float>() + i * encode::rule_target_planes(rules) * encode::PLANE_SIZE);
}

Batch make_batch(const CompactPositions& data, const uint32_t* rows, size_t n, bool pin, encode::InputKind inputs,
                 encode::RuleTargets rules) {
  Batch b = allocate_batch(n, inputs, pin, rules);
  const uint16_t* legal = data.legal.data();
  for (size_t i = 0; i < n; ++i) {
    fill_row(b, i, inputs, rules, data.state(rows[i]), legal + data.legal_begin[rows[i]],
             legal + data.legal_begin[rows[i] + 1]);
  }
  return b;
}

std::vector<uint32_t> epoch_order(const CompactPositions& data, uint64_t seed, int64_t epoch,
                                  const RowWeights& weights) {
  std::vector<uint32_t> order;
  order.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i)
    for (int c = weights.copies(data, i); c > 0; --c) order.push_back(uint32_t(i));
  GameRng rng(seed, uint64_t(epoch) ^ 0xE90C4ULL << 32);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(uint32_t(i))]);
  return order;
}

int64_t epoch_steps(const CompactPositions& data, int batch_size, const RowWeights& weights) {
  size_t n = 0;
  for (size_t i = 0; i < data.size(); ++i) n += size_t(weights.copies(data, i));
  return int64_t(n) / batch_size;
}

MemoryBatches::MemoryBatches(const CompactPositions& data, int batch_size, uint64_t seed, const RowWeights& weights,
                             BatchSlice slice, encode::InputKind inputs, encode::RuleTargets rules)
    : data_(data),
      batch_size_(batch_size),
      seed_(seed),
      weights_(weights),
      slice_(slice),
      inputs_(inputs),
      rules_(rules) {
  steps_per_epoch_ = epoch_steps(data, batch_size * slice.world_size, weights_);
  if (steps_per_epoch_ == 0)
    throw Error("the training set has " + std::to_string(data.size()) + " positions, fewer than one batch of " +
                std::to_string(batch_size * slice.world_size));
}

Batch MemoryBatches::batch(int64_t step, bool pin) {
  if (step / steps_per_epoch_ != epoch_) {
    epoch_ = step / steps_per_epoch_;
    order_ = epoch_order(data_, seed_, epoch_, weights_);
  }
  const size_t global_batch = size_t(batch_size_) * size_t(slice_.world_size);
  const size_t first = size_t(step % steps_per_epoch_) * global_batch + size_t(slice_.rank) * size_t(batch_size_);
  return make_batch(data_, order_.data() + first, size_t(batch_size_), pin, inputs_, rules_);
}

BatchLoader::BatchLoader(std::unique_ptr<BatchSource> source, int64_t first_step, const torch::Device& device)
    : source_(std::move(source)), device_(device), next_step_(first_step) {
  thread_ = std::thread([this] { produce(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void BatchLoader::produce() {
  try {
    const bool pin = device_.is_cuda();
    for (int64_t step = next_step_;; ++step) {
      Batch b = source_->batch(step, pin);
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stop_ || queue_.size() < QUEUE_DEPTH; });
      if (stop_) return;
      queue_.push_back(std::move(b));
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    failure_ = std::current_exception();
    changed_.notify_all();
  }
}

Batch BatchLoader::next() {
  Batch b;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !queue_.empty() || failure_; });
    if (queue_.empty()) std::rethrow_exception(failure_);
    b = std::move(queue_.front());
    queue_.pop_front();
  }
  changed_.notify_all();
  if (device_.is_cuda()) {
    b.planes = b.planes.to(device_, /*non_blocking=*/true);
    b.targets = b.targets.to(device_, /*non_blocking=*/true);
    if (b.rules.defined()) b.rules = b.rules.to(device_, /*non_blocking=*/true);
  }
  return b;
}

}  // namespace legalnet::train
