// tensorize's options and those of its merge subcommand, each declared once in a table
// (util/option_table.h) from which the parser, --help, validate() and report.json's options
// (record()) read; beside each table its --help text and its checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset_merge.h"
#include "util/option_table_fwd.h"

namespace legalnet::run {

struct TensorizeOptions {
  std::vector<std::string> pgn_files;  // PGN files, plain/.gz/.zst, "-" for stdin
  std::string out;                     // dataset path (.h5)
  int threads = 1;                     // 0: all cores
  bool strict = false;                 // the first bad game is fatal
  bool include_final = false;          // also each game's final position
  bool dedupe = false;                 // drop positions (by Zobrist key) already written
  uint64_t max_positions = 0;          // 0: no limit; else stop before the game that would exceed it
  std::vector<double> split;           // fractions for train/val/test files; empty: one file
  uint64_t split_seed = 0;
  bool quiet = false;
  std::string report;  // also write the summary as JSON here (--report)
  std::string command_line;
};

// --help's opening paragraph, and merge's description.
extern const char* const TENSORIZE_ABOUT;
extern const char* const MERGE_ABOUT;

// The tables, in --help's order. tensorize_options().record() gives the options report.json
// records.
const options::Table<TensorizeOptions>& tensorize_options();
// tensorize merge fills the dataset layer's MergeOptions (data/dataset_merge.h) directly.
const options::Table<data::MergeOptions>& merge_options();

// The checks of a run's options, the tables' ranges (validate()) and those across options (an
// input and an output, --split's fractions), before any work: throw legalnet::Error naming the
// option. The outputs are checked by the runs.
void check_tensorize_options(const TensorizeOptions& options);
void check_merge_options(const data::MergeOptions& options);

}  // namespace legalnet::run
