#include "nn/batches.h"

#include "encode/encode.h"
#include "games/rng.h"
#include "util/error.h"

namespace legalnet::nn {

constexpr size_t QUEUE_DEPTH = 4;

Batch make_batch(const CompactPositions& data, const uint32_t* rows, size_t n, bool pin) {
  auto options = torch::TensorOptions().dtype(torch::kFloat32).pinned_memory(pin);
  Batch b{torch::empty({int64_t(n), encode::PLANES, 8, 8}, options),
          torch::empty({int64_t(n), encode::MOVE_INDICES}, options)};
  float* planes = b.planes.data_ptr<float>();
  float* targets = b.targets.data_ptr<float>();
  for (size_t i = 0; i < n; ++i) {
    data.expand_planes(rows[i], planes + i * encode::POSITION_SIZE);
    data.expand_mask(rows[i], targets + i * encode::MOVE_INDICES);
  }
  return b;
}

std::vector<uint32_t> epoch_order(const CompactPositions& data, uint64_t seed, int64_t epoch, int check_weight) {
  std::vector<uint32_t> order;
  order.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const int copies = data.in_check[i] ? check_weight : 1;
    for (int c = 0; c < copies; ++c) order.push_back(uint32_t(i));
  }
  GameRng rng(seed, uint64_t(epoch) ^ 0xE90C4ULL << 32);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(uint32_t(i))]);
  return order;
}

int64_t epoch_steps(const CompactPositions& data, int batch_size, int check_weight) {
  size_t n = data.size();
  for (uint8_t c : data.in_check) n += c ? size_t(std::max(1, check_weight) - 1) : 0;
  return int64_t(n) / batch_size;
}

BatchLoader::BatchLoader(const CompactPositions& data, int batch_size, uint64_t seed, int64_t first_step,
                         const torch::Device& device, int check_weight, BatchSlice slice)
    : data_(data),
      batch_size_(batch_size),
      seed_(seed),
      device_(device),
      check_weight_(std::max(1, check_weight)),
      slice_(slice),
      next_step_(first_step) {
  steps_per_epoch_ = epoch_steps(data, batch_size * slice.world_size, check_weight_);
  if (steps_per_epoch_ == 0)
    throw Error("the training set has " + std::to_string(data.size()) + " positions, fewer than one batch of " +
                std::to_string(batch_size * slice.world_size));
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
    int64_t epoch = -1;
    std::vector<uint32_t> order;
    const bool pin = device_.is_cuda();
    for (int64_t step = next_step_;; ++step) {
      if (step / steps_per_epoch_ != epoch) {
        epoch = step / steps_per_epoch_;
        order = epoch_order(data_, seed_, epoch, check_weight_);
      }
      const size_t global_batch = size_t(batch_size_) * size_t(slice_.world_size);
      const size_t first = size_t(step % steps_per_epoch_) * global_batch + size_t(slice_.rank) * size_t(batch_size_);
      Batch b = make_batch(data_, order.data() + first, size_t(batch_size_), pin);
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
  }
  return b;
}

}  // namespace legalnet::nn
