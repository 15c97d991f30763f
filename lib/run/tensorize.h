// The tensorize tool: PGN games replayed with the chess core into a legalnet HDF5 dataset.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace legalnet::run {

struct TensorizeOptions {
  std::vector<std::string> pgn_files;  // PGN files, plain/.gz/.zst, "-" for stdin
  std::string out;                     // dataset path (.h5)
  int threads = 1;  // 0: all cores
  bool strict = false;         // the first bad game is fatal
  bool include_final = false;  // also each game's final position
  bool dedupe = false;         // drop positions (by Zobrist key) already written
  uint64_t max_positions = 0;  // 0: no limit; else stop before the game that would exceed it
  std::vector<double> split;   // fractions for train/val/test files; empty: one file
  uint64_t split_seed = 0;
  bool quiet = false;
  std::string report;  // also write the summary as JSON here (--report)
  std::string command_line;
};

// What was read, kept and skipped, so that a user can reconcile it against the files:
// games_read = games (kept) + skipped_games (+ games after a --max-positions stop, not read).
struct TensorizeSummary {
  uint64_t games_read = 0, games = 0, positions = 0, skipped_games = 0, dropped_duplicates = 0;
  std::map<std::string, uint64_t> skipped_by_reason;  // "illegal or unreadable move", "variant Atomic", ...
  uint64_t games_with_notes = 0;                      // read leniently, e.g. void castling rights dropped
  bool stopped_at_max_positions = false;
  std::vector<std::string> outputs;
  std::vector<uint64_t> output_positions;
  uint64_t bytes = 0;
  double seconds = 0;
};

// The file a split part goes to: "data/set.h5" with part "val" -> "data/set.val.h5".
std::string split_output_path(const std::string& out, const std::string& part);
// Names of the parts of a split into n files: train, val, test.
std::vector<std::string> split_part_names(size_t n);

// Runs the tool; throws legalnet::Error on bad options, unreadable input, or (with strict)
// the first bad game. Bad games are otherwise reported on stderr and skipped.
TensorizeSummary run_tensorize(const TensorizeOptions& options);

}  // namespace legalnet::run
