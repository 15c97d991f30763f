#include "run/tensorize/merge.h"

#include "run/tensorize/options.h"
#include "util/console.h"

namespace legalnet::run {

data::MergeSummary run_merge(const data::MergeOptions& o, bool quiet) {
  check_merge_options(o);
  const data::MergeSummary summary = data::merge_datasets(o);
  if (!quiet)
    say("tensorize merge: {} games, {} positions from {} shards into {}\n", summary.games, summary.positions,
        o.shards.size(), o.out);
  return summary;
}

}  // namespace legalnet::run
