#include "run/train/load_data.h"

#include <fmt/core.h>

#include <algorithm>

#include "train/stream.h"
#include "util/error.h"

namespace legalnet::run {
namespace {

using train::CompactPositions;

// Stream mode's source: blocks of the files through a shuffle buffer, this rank's blocks.
std::unique_ptr<train::StreamBatches> stream_source(const TrainOptions& o, const nn::ModelConfig& model,
                                                    train::Collectives& ranks, TrainingData& d,
                                                    std::vector<data::DatasetReader> readers) {
  train::StreamOptions so;
  so.paths = o.data;
  so.batch_size = o.batch_size;
  so.seed = o.seed;
  so.weights = row_weights(o);
  so.position_ply_limit = o.position_ply_limit;
  so.val_fraction = o.val.empty() ? o.val_fraction : 0.0;
  so.shuffle_buffer = o.shuffle_buffer;
  so.slice = {ranks.rank(), ranks.world_size()};
  so.inputs = model.inputs;
  so.rules = model.rule_targets();
  auto stream = std::make_unique<train::StreamBatches>(so, std::move(readers));
  // Ranks hold different blocks: all take the steps the rank with the fewest rows can.
  const auto rows_per_epoch = ranks.all_gather(int64_t(stream->rows_per_epoch()));
  const auto fewest = std::min_element(rows_per_epoch.begin(), rows_per_epoch.end());
  if (*fewest < o.batch_size)
    throw Error(
        fmt::format("stream mode: rank {} of {} reads {} positions (the files' blocks of 8192 rows are dealt "
                    "to the ranks), fewer than one batch of {}; use fewer processes or --data-mode memory",
                    fewest - rows_per_epoch.begin(), ranks.world_size(), *fewest, o.batch_size));
  stream->set_steps_per_epoch(*fewest / o.batch_size);
  for (int64_t rows : ranks.all_gather(int64_t(stream->rows()))) d.train_positions += uint64_t(rows);
  return stream;
}

}  // namespace

OpenDatasets open_datasets(const TrainOptions& o) { return {data::open_readers(o.data), data::open_readers(o.val)}; }

TrainingData load_training_data(const TrainOptions& o, const nn::ModelConfig& model, train::Collectives& ranks,
                                bool verbose, OpenDatasets files) {
  TrainingData d;
  d.plan = plan_data(o, ranks, files.data);
  d.train_rows = std::make_unique<CompactPositions>();
  CompactPositions& train_rows = *d.train_rows;
  CompactPositions val_rows;
  train::LoadOptions load;
  load.position_ply_limit = o.position_ply_limit;
  load.quiet = !verbose;
  train::LoadOptions val_load = load;
  val_load.max_rows = o.val_max;
  if (d.plan.streamed) {
    val_rows = o.val.empty() ? train::streamed_validation_rows(files.data, o.val_fraction, o.seed, o.position_ply_limit,
                                                               o.val_max)
                             : train::load_positions(files.val, val_load);
    d.source = stream_source(o, model, ranks, d, std::move(files.data));
  } else {
    if (o.val.empty()) {
      train::split_by_game(train::load_positions(files.data, load), o.val_fraction, o.seed, train_rows, val_rows);
    } else {
      train_rows = train::load_positions(files.data, load);
      val_rows = train::load_positions(files.val, val_load);
    }
    d.train_positions = train_rows.size();
    d.source = std::make_unique<train::MemoryBatches>(train_rows, o.batch_size, o.seed, row_weights(o),
                                                      train::BatchSlice{ranks.rank(), ranks.world_size()}, model.inputs,
                                                      model.rule_targets());
  }
  val_rows.keep_first(o.val_max);
  d.val_positions = val_rows.size();
  // Each rank validates its share of the rows; the sums are added up over the ranks.
  for (size_t r = val_rows.size() * size_t(ranks.rank()) / size_t(ranks.world_size());
       r < val_rows.size() * size_t(ranks.rank() + 1) / size_t(ranks.world_size()); ++r)
    d.val_share.append_row(val_rows, r);
  return d;
}

}  // namespace legalnet::run
