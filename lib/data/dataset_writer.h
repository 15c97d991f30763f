// Writes a legalnet dataset (docs/dataset.md) to a temporary file next to the target, renamed
// with the run's other outputs after finish() (commit_together, util/files.h); a failed or
// interrupted run leaves nothing under the target name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/encoded_rows.h"

namespace legalnet {
class AtomicPath;
class ThreadPool;
}  // namespace legalnet

namespace legalnet::data {

// What the root attributes record about how the file was made.
struct DatasetProvenance {
  std::string tool = "tensorize";
  std::string command_line;
  std::vector<std::string> sources;  // input files, indexed by games/source
  std::string split = "all";         // which part of a --split this file holds
  uint64_t split_seed = 0;
  bool include_final = false;
  bool dedupe = false;
  std::vector<std::string> merged_from;  // the shard files a merged dataset presents
};

class DatasetWriter {
 public:
  // Creates the file; chunks are compressed on `pool`'s workers (HDF5 is called only from the
  // thread that calls add_game and finish).
  DatasetWriter(const std::string& path, ThreadPool& pool);
  ~DatasetWriter();

  // Appends rows[i] for each i in `selected` (ascending) as the rows of one game.
  void add_game(const GameInfo& game, const EncodedRows& rows, const std::vector<uint32_t>& selected);

  // Writes the games table and the attributes, closes and syncs the file, still under its
  // temporary name, which commit_together renames onto the target once the run's other outputs
  // are complete too.
  void finish(const DatasetProvenance& provenance);
  // The temporary the file is written under.
  AtomicPath& temporary();
  // Where the finished file is now: its temporary until it is renamed, then the target.
  const std::string& finished_path() const;

  uint64_t rows() const;
  uint64_t games() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace legalnet::data
