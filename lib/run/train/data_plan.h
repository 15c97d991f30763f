// Whether a run holds its training rows in memory or streams them from the files
// (--data-mode; auto decides by the datasets' size against the memory available).
#pragma once

#include <string>
#include <vector>

#include "data/dataset_reader.h"

#include "run/train/options.h"
#include "train/distributed.h"

namespace legalnet::run {

struct DataPlan {
  bool streamed = false;
  std::string description;  // said at the start of a run
};

// Memory when the datasets fit in half the available memory (shared by the processes on
// this node, each of which holds them all), else streamed. The processes decide together:
// nodes with less memory make every process stream.
DataPlan plan_data(const TrainOptions& o, train::Collectives& ranks, const std::vector<data::DatasetReader>& data);

}  // namespace legalnet::run
