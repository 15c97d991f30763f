// The tensorize tool: PGN games replayed with the chess core into a legalnet HDF5 dataset.
// The stages: game_batches (read and replay), game_router (skip, split, dedupe, limit),
// dataset_outputs (the writers); report (the counts, --report and the summary).
#pragma once

#include "run/tensorize/dataset_outputs.h"
#include "run/tensorize/options.h"
#include "run/tensorize/report.h"

namespace legalnet::run {

// Runs the tool; throws legalnet::Error on bad options, unreadable input, or (with strict)
// the first bad game. Bad games are otherwise reported on stderr and skipped.
TensorizeReport run_tensorize(const TensorizeOptions& options);

}  // namespace legalnet::run
