// tensorize merge: dataset shards (one per Slurm array task, say) joined into one dataset by
// the dataset layer (data/dataset_merge.h), after the options are checked.
#pragma once

#include "data/dataset_merge.h"

namespace legalnet::run {

// Joins the shards and, unless `quiet`, says what it joined; throws legalnet::Error naming
// the first bad shard before anything is written.
data::MergeSummary run_merge(const data::MergeOptions& options, bool quiet);

}  // namespace legalnet::run
