// A training run's folder: options.json, metrics.csv, checkpoint.safetensors and
// model.safetensors, with the rules that keep earlier work safe. No torch here: the trainer saves into the paths it gives.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "util/files.h"

namespace legalnet::train {

class RunFolder {
 public:
  // Checks, before any costly work, that `path` can hold this run: not a file, and either
  // without a run, resumed (--resume: a checkpoint must be there) or replaced (--force).
  // `inputs` are the run's datasets, which none of the folder's files may be.
  RunFolder(std::string path, bool resume, bool force, const std::vector<NamedPath>& inputs);

  std::string model_path() const { return path_ + "/model.safetensors"; }
  std::string checkpoint_path() const { return path_ + "/checkpoint.safetensors"; }
  std::string metrics_path() const { return path_ + "/metrics.csv"; }
  std::string options_path() const { return path_ + "/options.json"; }
  std::string replaced_path() const { return path_ + "/replaced"; }

  // Creates the folder and writes options.json; a new run also starts metrics.csv. With
  // --force, the previous run's files move to replaced/ first, and stay there until this run
  // has saved its model: a failed new run never costs the finished old one.
  void start(const std::string& options_json, const char* csv_header);
  // Appends one metrics row (flushed: the file is read while training runs).
  void append_metrics(const std::string& row);
  // The step of the last checkpoint this process wrote or resumed from; -1 when none.
  void checkpoint_written(int64_t step) { last_checkpoint_step_ = step; }
  int64_t last_checkpoint_step() const { return last_checkpoint_step_; }
  // After the model is saved: the replaced run, if any, is deleted.
  void finish();

 private:
  std::string path_;
  bool resume_, force_;
  std::ofstream metrics_;
  int64_t last_checkpoint_step_ = -1;
};

}  // namespace legalnet::train
