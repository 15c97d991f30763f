// Joins dataset shards (one per Slurm array task, say) into one dataset: by default through
// HDF5 virtual datasets, so the large arrays are not copied; with `copy`, into one real file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace legalnet::data {

struct MergeOptions {
  std::vector<std::string> shards;  // the datasets joined, in order
  std::string out;
  bool copy = false;
  std::string command_line;
};

struct MergeSummary {
  uint64_t positions = 0, games = 0;
};

// Checks every input (exists, is a legalnet dataset of this format version with the expected
// shapes and dtypes) before writing anything; throws legalnet::Error naming the first bad one.
// The caller checks that shards and an output are given (run/tensorize/merge.h).
// The merged file lists its inputs relative to its own folder, so the folder can move as a whole.
MergeSummary merge_datasets(const MergeOptions& options);

}  // namespace legalnet::data
