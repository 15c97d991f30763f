// tensorize's writing stage: the datasets a run writes, one (--out) or one per --split part
// (NAME.train.h5, NAME.val.h5[, NAME.test.h5]), finished together and renamed together.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset_writer.h"
#include "run/tensorize/options.h"
#include "run/tensorize/report.h"

namespace legalnet {
class AtomicPath;
class ThreadPool;
}  // namespace legalnet

namespace legalnet::run {

// The file a split part goes to: "data/set.h5" with part "val" -> "data/set.val.h5".
std::string split_output_path(const std::string& out, const std::string& part);
// Names of the parts of a split into n files: train, val, test.
std::vector<std::string> split_part_names(size_t n);
// The datasets' paths, in part order.
std::vector<std::string> dataset_paths(const TensorizeOptions& options);

class DatasetOutputs {
 public:
  // Creates every dataset (under its temporary name); chunks are compressed on `pool`.
  DatasetOutputs(const TensorizeOptions& options, ThreadPool& pool);
  data::DatasetWriter& part(size_t i) { return *writers_[i]; }
  // Finishes each dataset, still under its temporary name, with the run's provenance, and
  // counts into `report` what went where.
  void finish(const TensorizeOptions& options, TensorizeReport& report);
  // Every dataset takes its name, together with `report` (null: none): commit_together.
  void commit(AtomicPath* report);

 private:
  std::vector<std::string> part_names_;
  std::vector<std::unique_ptr<data::DatasetWriter>> writers_;
};

}  // namespace legalnet::run
