// The run's rows: the training rows (held in memory or streamed, as the DataPlan says) and
// this rank's share of the validation rows.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data/dataset_reader.h"

#include "nn/model_config.h"
#include "run/train/data_plan.h"
#include "run/train/options.h"
#include "train/batches.h"
#include "train/distributed.h"
#include "train/training_data.h"

namespace legalnet::run {

// The run's datasets, each opened once before step 1 (and validated then): options.json's
// identities, the data plan and the loaders all read these readers.
struct OpenDatasets {
  std::vector<data::DatasetReader> data, val;
};
OpenDatasets open_datasets(const TrainOptions& o);

struct TrainingData {
  DataPlan plan;
  std::unique_ptr<train::CompactPositions> train_rows;  // memory mode: what `source` reads (a stable address)
  std::unique_ptr<train::BatchSource> source;
  uint64_t train_positions = 0;  // over all ranks
  size_t val_positions = 0;      // over all ranks
  train::CompactPositions val_share;
};

// Takes the readers of `files` (the stream keeps the training files').
TrainingData load_training_data(const TrainOptions& o, const nn::ModelConfig& model, train::Collectives& ranks,
                                bool verbose, OpenDatasets files);

}  // namespace legalnet::run
