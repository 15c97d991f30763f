#include "run/evaluate/dataset_pass.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>

#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "run/evaluate/position_sets.h"
#include "util/console.h"
#include "util/error.h"
#include "util/progress.h"

namespace legalnet::run {
namespace {

// The rows measured so far and the sums the figures are made of.
class DatasetPass {
 public:
  DatasetPass(const EvaluatedNet& net, const EvaluateOptions& o, eval::Gallery& gallery, bool whole_set)
      : net_(net), o_(o), gallery_(gallery), whole_set_(whole_set) {}

  // Rows [start, start + count) of `path`, counted everywhere they belong.
  void measure(const data::DatasetReader& reader, const std::string& path, uint64_t start, uint64_t count) {
    const std::vector<chess::Position> positions = reader.read_board_positions(start, count);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<float> probs = net_.predict(positions, &bce_sum_);
    r_.inference_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint64_t i = 0; i < count; ++i) {
      const chess::MoveList legal(positions[i]);
      const float* p = &probs[i * encode::MOVE_INDICES];
      r_.anatomy.add(positions[i], legal, p, o_.threshold);
      r_.situations.add(positions[i], legal, p, o_.threshold, sampled_pick_uniform(o_.seed, done_ + i));
      if (whole_set_ && encode::has_rare_move(legal)) r_.rare.add(positions[i], legal, p, o_.threshold);
      gallery_.add_position(positions[i], legal, p, fmt::format("row {} of {}", start + i, path));
    }
    done_ += count;
  }

  uint64_t done() const { return done_; }

  DatasetFigures finish(uint64_t rows_in_data) {
    r_.rows_in_data = rows_in_data;
    r_.bce = r_.anatomy.positions ? bce_sum_ / (double(r_.anatomy.positions) * encode::MOVE_INDICES) : 0.0;
    if (whole_set_)
      r_.scanned = done_;
    else
      count_rare_moves(net_, o_, r_);
    return std::move(r_);
  }

 private:
  const EvaluatedNet& net_;
  const EvaluateOptions& o_;
  eval::Gallery& gallery_;
  const bool whole_set_;  // every row is measured: the rare kinds are counted on the way
  uint64_t done_ = 0;
  double bce_sum_ = 0;
  DatasetFigures r_;
};

}  // namespace

DatasetFigures measure_dataset(const EvaluatedNet& net, const EvaluateOptions& o, eval::Gallery& gallery) {
  uint64_t rows_in_data = 0;
  for (const auto& path : o.data) rows_in_data += data::DatasetReader(path).num_positions();
  const uint64_t total = o.max_positions ? std::min(rows_in_data, o.max_positions) : rows_in_data;
  if (total == 0)  // a BCE of 0 and a precision of 0 would read as figures
    throw Error("--data: " + fmt::format("{}", fmt::join(o.data, ", ")) + " holds no positions to measure");
  DatasetPass pass(net, o, gallery, total == rows_in_data);
  Progress progress("positions", total, !o.quiet && stderr_is_terminal());
  for (const auto& path : o.data) {
    const data::DatasetReader reader(path);
    const uint64_t n = std::min(reader.num_positions(), total - pass.done());
    for (uint64_t start = 0; start < n; start += uint64_t(o.batch_size)) {
      pass.measure(reader, path, start, std::min(uint64_t(o.batch_size), n - start));
      progress.update(pass.done());
    }
    if (pass.done() >= total) break;
  }
  progress.finish();
  return pass.finish(rows_in_data);
}

}  // namespace legalnet::run
