#include "run/tensorize/options.h"

#include <cmath>

#include "run/threads_option.h"
#include "util/error.h"
#include "util/option_cli.h"

namespace legalnet::run {

const char* const TENSORIZE_ABOUT =
    "tensorize: replays PGN games (gen_moves output or real games; plain, .gz or .zst) and writes an HDF5\n"
    "dataset: positions int8 (N,7,8,8), legal_moves uint8 (N,4096), and per-row/per-game provenance.\n"
    "See docs/dataset.md. A game that cannot be read (syntax, a bad FEN tag, an illegal move) or that is\n"
    "another variant (Variant tag, Chess960) is reported and skipped; a file that is not PGN fails the run.";
const char* const MERGE_ABOUT =
    "Join dataset shards into one dataset: HDF5 virtual datasets over the shards (no copy; keep the shards,\n"
    "stored relative to the output's folder), or one real file with --copy. Every shard is checked first.";

const options::Table<TensorizeOptions>& tensorize_options() {
  using O = TensorizeOptions;
  using R = options::Rows<O>;
  static const options::Table<O> table{
      "tensorize",
      {
          R::value(&O::pgn_files, "--in,-i", "pgn_files", "Input PGN file ('-' for stdin); repeat for several"),
          R::value(&O::out, "--out,-o", "", "Output dataset (.h5); with --split, NAME.train.h5, NAME.val.h5, ..."),
          threads_option(&O::threads, "Worker threads (replay, encoding, compression)"),
          R::flag(&O::strict, "--strict", "", "Stop at the first bad game instead of skipping it"),
          R::flag(&O::include_final, "--include-final", "", "Also write each game's final position (played_move -1)"),
          R::flag(&O::dedupe, "--dedupe", "", "Drop positions already written (same placement, side, castling, e.p.)"),
          R::value(&O::max_positions, "--max-positions", "",
                   "Stop before the game that would exceed this many rows (0: no limit)")
              .range(0, options::MAX_COUNT),
          R::value(&O::split, "--split", "", "Fractions by game for train,val[,test] files, e.g. 0.9,0.05,0.05")
              .delimiter(','),
          R::value(&O::split_seed, "--split-seed", "", "Seed of the split by game").show_default(),
          R::flag(&O::quiet, "--quiet,-q", "",
                  "No progress line, no notes and no summary (skipped games are still reported)"),
          R::value(&O::report, "--report", "",
                   "Also write the summary as JSON to this file: games read, kept and skipped by reason"),
          R::alias("--stats-json", "--report"),
      }};
  return table;
}

const options::Table<data::MergeOptions>& merge_options() {
  using O = data::MergeOptions;
  using R = options::Rows<O>;
  static const options::Table<O> table{
      "tensorize merge",
      {
          R::value(&O::out, "--out,-o", "", "Joined dataset (.h5)").required(),
          R::value(&O::shards, "shards", "", "Shard datasets, in order").required(),
          R::flag(&O::copy, "--copy", "", "Copy the shards' data into the output instead of referring to it"),
      }};
  return table;
}

void check_tensorize_options(const TensorizeOptions& o) {
  if (o.pgn_files.empty() || o.out.empty())
    throw Error("give --in FILE and --out FILE.h5 (or the merge subcommand); see --help");
  tensorize_options().validate(o);
  if (!o.split.empty()) {
    double sum = 0;
    for (double f : o.split) {
      if (!(f > 0)) throw Error("--split fractions must be positive");
      sum += f;
    }
    if (o.split.size() < 2 || o.split.size() > 3 || std::fabs(sum - 1.0) > 1e-6)
      throw Error("--split needs 2 or 3 fractions that add up to 1, e.g. 0.9,0.05,0.05");
  }
}

void check_merge_options(const data::MergeOptions& o) {
  if (o.shards.empty()) throw Error("merge: no input datasets");
  if (o.out.empty()) throw Error("merge: no output: give --out FILE.h5");
  merge_options().validate(o);
}

}  // namespace legalnet::run
