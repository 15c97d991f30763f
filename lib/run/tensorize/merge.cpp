#include "run/tensorize/merge.h"

#include "util/console.h"
#include "util/error.h"

namespace legalnet::run {

data::MergeSummary run_merge(const data::MergeOptions& o, bool quiet) {
  if (o.shards.empty()) throw Error("merge: no input datasets");
  if (o.out.empty()) throw Error("merge: no output: give --out FILE.h5");
  const data::MergeSummary summary = data::merge_datasets(o);
  if (!quiet)
    say("tensorize merge: {} games, {} positions from {} shards into {}\n", summary.games, summary.positions,
        o.shards.size(), o.out);
  return summary;
}

}  // namespace legalnet::run
