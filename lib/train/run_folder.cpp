#include "train/run_folder.h"

#include <filesystem>
#include <system_error>

#include "util/error.h"

namespace legalnet::train {
namespace {

namespace fs = std::filesystem;

// model.pt and checkpoint.pt are a run of an earlier legalnet (TorchScript files, no longer
// read): counted as a run, so that only --force replaces them, and moved to replaced/ with it.
constexpr const char* RUN_FILES[] = {"model.safetensors", "checkpoint.safetensors", "metrics.csv", "options.json",
                                     "model.pt",          "checkpoint.pt"};
constexpr const char* OLD_CHECKPOINT = "checkpoint.pt";

}  // namespace

RunFolder::RunFolder(std::string path, bool resume, bool force, const std::vector<NamedPath>& inputs)
    : path_(std::move(path)), resume_(resume), force_(force) {
  if (path_.empty()) throw Error("no run folder: give --out runs/NAME");
  if (resume && force) throw Error("--resume and --force contradict each other: continue the run or replace it");
  std::error_code ec;
  if (fs::exists(path_, ec) && !fs::is_directory(path_, ec))
    throw Error("--out '" + path_ + "' is a file; it must be a run folder (new or existing)");
  std::vector<NamedPath> outputs;
  for (const char* name : RUN_FILES) outputs.push_back({"--out", path_ + "/" + name});
  check_outputs_are_not_inputs(outputs, inputs);
  if (resume && !fs::exists(checkpoint_path()) && fs::exists(path_ + "/" + OLD_CHECKPOINT))
    throw Error("--resume: '" + path_ + "/" + OLD_CHECKPOINT +
                "' is a TorchScript checkpoint of an earlier legalnet, which is not read (it can run code); "
                "start over with --force");
  if (resume && !fs::exists(checkpoint_path())) throw Error("--resume: no checkpoint at '" + checkpoint_path() + "'");
  bool holds_run = false;
  for (const char* name : {"model.safetensors", "checkpoint.safetensors", "model.pt", OLD_CHECKPOINT})
    holds_run |= fs::exists(path_ + "/" + name);
  if (!resume && !force && holds_run)
    throw Error("'" + path_ + "' already holds a run; use --resume to continue it or --force to start over");
}

void RunFolder::start(const std::string& options_json, const char* csv_header) {
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) throw Error("cannot create the run folder '" + path_ + "': " + ec.message());
  if (!resume_) {
    if (force_) {
      // Kept until this run has its model: replaced/ holds the last run that was replaced.
      bool any = false;
      for (const char* name : RUN_FILES) any |= fs::exists(path_ + "/" + name);
      if (any) {
        fs::remove_all(replaced_path(), ec);
        fs::create_directories(replaced_path(), ec);
        if (ec) throw Error("cannot create '" + replaced_path() + "': " + ec.message());
        for (const char* name : RUN_FILES) {
          if (!fs::exists(path_ + "/" + name)) continue;
          fs::rename(path_ + "/" + name, replaced_path() + "/" + name, ec);
          if (ec) throw Error("cannot move '" + path_ + "/" + name + "' to '" + replaced_path() + "': " + ec.message());
        }
      }
    }
    OutputFile header(metrics_path());
    header.write(csv_header);
    header.commit();
  }
  OutputFile json(options_path());
  json.write(options_json + "\n");
  json.commit();
  metrics_.open(metrics_path(), std::ios::app);
  if (!metrics_) throw Error("cannot append to '" + metrics_path() + "'");
}

void RunFolder::append_metrics(const std::string& row) {
  metrics_ << row;
  metrics_.flush();
  if (!metrics_) throw Error("cannot write '" + metrics_path() + "'");
}

void RunFolder::finish() {
  std::error_code ec;
  fs::remove_all(replaced_path(), ec);
}

}  // namespace legalnet::train
