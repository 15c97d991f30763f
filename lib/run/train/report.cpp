#include "run/train/report.h"

#include "util/console.h"
#include "util/provenance.h"
#include "util/stop_request.h"

namespace legalnet::run {

nlohmann::ordered_json TrainReport::json() const {
  const TrainReport& r = *this;
  nlohmann::ordered_json j = provenance_json("train", options.command_line);
  j["out"] = r.out;
  j["finished"] = r.finished;
  if (r.stop_signal) j["stopped_by"] = stop_signal_name(r.stop_signal);
  j["steps"] = r.steps;
  j["val_loss"] = r.val_loss;
  j["val_precision"] = r.val_precision;
  j["val_recall"] = r.val_recall;
  j["samples_per_second"] = r.samples_per_second;
  return j;
}

void TrainReport::print() const {
  const TrainReport& r = *this;
  if (r.finished)
    say("train: {} steps in {:.1f} s; model in {}\n", r.steps, r.train_seconds, r.model_path);
  else if (r.stop_signal)
    say("train: {}: stopped after step {} with a checkpoint in '{}/checkpoint.safetensors'; continue with --resume "
        "(exit status {})\n",
        stop_signal_name(r.stop_signal), r.steps, r.out, EXIT_STOPPED);
  else
    say("train: stopped after step {}; continue with --resume\n", r.steps);
}

}  // namespace legalnet::run
