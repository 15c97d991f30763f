// What a train run did: TrainReport, from which both --report's JSON (json()) and the run's
// last terminal line (print()) are written.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "run/train/options.h"

namespace legalnet::run {

struct TrainReport {
  TrainOptions options;   // the run's, as options.json records them (its provenance: the command line)
  std::string out;        // the run folder
  bool finished = false;  // false: paused at --stop-at-step, to --resume
  int64_t steps = 0;      // the run's steps so far (a resumed run's included)
  double train_seconds = 0;
  std::string model_path;  // a finished run's model
  int stop_signal = 0;     // paused because this signal asked it to (util/stop_request.h), or 0
  // The last validation row's figures (0 when this process validated none).
  double val_loss = 0, val_precision = 0, val_recall = 0;
  double samples_per_second = 0;

  // --report's JSON: provenance, then the run's end and its last figures (the options are
  // options.json's).
  nlohmann::ordered_json json() const;
  // The run's last line on stderr: where the model is, or how to continue.
  void print() const;
};

}  // namespace legalnet::run
