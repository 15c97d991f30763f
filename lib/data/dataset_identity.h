// What a dataset is, beyond its name: train --resume checks that a run continues on the data
// it began with, whatever the path was spelled as (./d.h5, an absolute path after a Slurm
// requeue changed the directory) and whatever file now lies under that name.
#pragma once

#include <cstdint>
#include <string>

namespace legalnet::data {

struct DatasetIdentity {
  std::string path;  // resolved: absolute, links and "." / ".." followed (weakly_canonical)
  uint64_t positions = 0, games = 0;
  // 16 hex digits: FNV-1a over the row and game counts, every game's rows, plies, source game
  // number, source line and result, and the played moves of the first and last 4,096 rows. It
  // reads the games table and two slices of rows, not the positions: cheap on any size.
  std::string fingerprint;
};

class DatasetReader;

// The identity of an open dataset.
DatasetIdentity dataset_identity(const DatasetReader& reader);
// Opens and validates `path` as DatasetReader does; throws legalnet::Error naming it.
DatasetIdentity dataset_identity(const std::string& path);

}  // namespace legalnet::data
