#include "train/run_folder.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "util/error.h"
#include "util/json.h"

namespace legalnet::train {
namespace {

namespace fs = std::filesystem;

// model.pt and checkpoint.pt are a run of an earlier legalnet (TorchScript files, no longer
// read): counted as a run, so that only --force replaces them, and moved to replaced/ with it.
constexpr const char* RUN_FILES[] = {"model.safetensors", "checkpoint.safetensors", "metrics.csv", "options.json",
                                     "model.pt",          "checkpoint.pt"};
constexpr const char* OLD_CHECKPOINT = "checkpoint.pt";

// The options a resumed run must share with its checkpoint's run, as options.json names them,
// in the order a difference is reported. Left out, free to change on --resume: how long it
// runs (--epochs, --max-steps, --max-time, --stop-at-step), how often it reports
// (--eval-every, --checkpoint-every) and where and how fast (--device, --precision,
// --threads, --quiet); everything else decides which rows, in which order, the run learns
// from and how.
struct KeptOption {
  const char* key;
  const char* option;
};
constexpr KeptOption KEPT_OPTIONS[] = {
    {"data", "--data"},
    {"val", "--val"},
    {"val_fraction", "--val-fraction"},
    {"val_max", "--val-max"},
    {"batch_size", "--batch-size"},
    {"lr", "--lr"},
    {"optimizer", "--optimizer"},
    {"weight_decay", "--weight-decay"},
    {"warmup", "--warmup"},
    {"min_lr_ratio", "--min-lr-ratio"},
    {"clip", "--clip"},
    {"position_ply_limit", "--position-ply-limit"},
    {"max_ply", "--max-plies"},  // runs written before --position-ply-limit
    {"check_weight", "--check-weight"},
    {"rare_weight", "--rare-weight"},
    {"data_mode", "--data-mode"},
    {"shuffle_buffer", "--shuffle-buffer"},
    {"processes", "the number of processes (WORLD_SIZE)"},
    {"seed", "--seed"},
};
// The net: options.json's "model", one key per option.
constexpr KeptOption MODEL_OPTIONS[] = {
    {"kind", "--arch"},    {"hidden", "--hidden"},         {"blocks", "--blocks"},
    {"channels", "--channels"}, {"heads", "--heads"},      {"squeeze_excitation", "--se"},
    {"geometric_head", "--full-head"}, {"mixing", "--mixing"}, {"input_kind", "--inputs"}, {"inputs", "--inputs"},
};

std::string shown(const nlohmann::json& value) { return json_excerpt(value); }

// The file that marks replaced/ as train's own: a folder without it (the user's, or a link
// planted in a shared folder) is never deleted, moved into or written through.
constexpr const char* REPLACED_MARK = ".legalnet-replaced";

// Whether anything is at `path`, a dangling link included.
bool lexists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// A replaced/ that --force made: a real folder (not a link) holding the mark as a plain file.
bool made_by_train(const std::string& dir) {
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         lstat((dir + "/" + REPLACED_MARK).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

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
  bool any_run_file = false;
  for (const char* name : RUN_FILES) any_run_file |= lexists(path_ + "/" + name);
  if (force && any_run_file && lexists(replaced_path()) && !made_by_train(replaced_path()))
    throw Error("--force: '" + replaced_path() + "' is not a folder train made (it has no " + REPLACED_MARK +
                "), and --force keeps the run it replaces there; move it away first");
}

RunFolder::~RunFolder() {
  if (metrics_fd_ >= 0) close(metrics_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);
}

void RunFolder::lock() {
  if (lock_fd_ >= 0) return;
  const int fd = open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return;  // a new folder: start() makes it, then locks it
    throw Error("cannot open the run folder '" + path_ + "': " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(fd);
    if (error == EWOULDBLOCK)
      throw Error("'" + path_ + "' is in use by another train (it holds the folder's lock); wait for it to end, or use "
                  "another --out");
    throw Error("cannot lock the run folder '" + path_ + "': " + std::strerror(error));
  }
  lock_fd_ = fd;
}

void RunFolder::check_resumed_options(const std::string& options_json) const {
  std::ifstream in(options_path());
  if (!in) throw Error("--resume: cannot read '" + options_path() + "': the run's options cannot be compared");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json run;
  try {
    run = parse_json(text.str());
  } catch (const JsonError& e) {
    throw Error(options_path() + ": " + e.what());
  }
  if (!run.is_object()) throw Error(options_path() + ": not a JSON object");
  const nlohmann::json now = nlohmann::json::parse(options_json);
  auto differs = [&](const nlohmann::json& was, const nlohmann::json& is, const KeptOption& kept) {
    // A key an older legalnet did not write cannot be compared.
    if (!was.contains(kept.key) || !is.contains(kept.key) || was[kept.key] == is[kept.key]) return;
    throw Error("--resume: " + std::string(kept.option) + " is " + shown(is[kept.key]) + " here but " +
                shown(was[kept.key]) + " in the run being resumed ('" + options_path() +
                "'); resume with the run's value, or start a new run");
  };
  if (run.contains("model") && run["model"].is_object() && now.contains("model"))
    for (const KeptOption& kept : MODEL_OPTIONS) differs(run["model"], now["model"], kept);
  for (const KeptOption& kept : KEPT_OPTIONS) differs(run, now, kept);
}

void RunFolder::start(const std::string& options_json, const std::string& csv_header) {
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) throw Error("cannot create the run folder '" + path_ + "': " + ec.message());
  lock();
  // Another train may have started a run here since this one looked (it held no lock then).
  if (!resume_ && !force_ &&
      (fs::exists(checkpoint_path()) || fs::exists(model_path()) || fs::exists(path_ + "/" + OLD_CHECKPOINT)))
    throw Error("'" + path_ + "' already holds a run; use --resume to continue it or --force to start over");
  if (!resume_) {
    if (force_) replace_previous_run();
    OutputFile header(metrics_path(), Links::REPLACE);
    header.write(csv_header);
    header.commit();
  }
  // Appended to, never through a link (O_NOFOLLOW) nor into anything but a plain file.
  metrics_fd_ = open(metrics_path().c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (metrics_fd_ < 0 || fstat(metrics_fd_, &st) != 0 || !S_ISREG(st.st_mode))
    throw Error("cannot append to '" + metrics_path() + "': " +
                (metrics_fd_ < 0 && errno == ELOOP ? std::string("a symbolic link (a run's files are never written through one)")
                 : metrics_fd_ < 0                 ? std::string(std::strerror(errno))
                                                   : std::string("not a plain file")));
  OutputFile json(options_path(), Links::REPLACE);
  json.write(options_json + "\n");
  json.commit();
}

void RunFolder::append_metrics(const std::string& row) {
  for (size_t done = 0; done < row.size();) {
    const ssize_t n = write(metrics_fd_, row.data() + done, row.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write '" + metrics_path() + "': " + std::strerror(errno));
    done += size_t(n);
  }
}

// replaced/ holds the last run that finished (or was paused) before --force, until a new
// model is saved. A --force run that fails leaves its files here and replaced/ pending; the
// next --force discards those files (a run that never finished is what --force starts over)
// and keeps replaced/: two failed runs in a row never cost the finished one.
void RunFolder::replace_previous_run() {
  bool any = false;
  for (const char* name : RUN_FILES) any |= lexists(path_ + "/" + name);
  if (!any) return;
  std::error_code ec;
  const bool pending = made_by_train(replaced_path());
  if (pending && !lexists(model_path()) && !lexists(path_ + "/model.pt")) {
    for (const char* name : RUN_FILES) {
      fs::remove(path_ + "/" + name, ec);
      if (ec) throw Error("cannot remove '" + path_ + "/" + name + "': " + ec.message());
    }
    return;
  }
  // A finished run here is newer than a pending replaced/: that one was superseded.
  if (pending) fs::remove_all(replaced_path(), ec);
  if (ec) throw Error("cannot remove '" + replaced_path() + "': " + ec.message());
  fs::create_directory(replaced_path(), ec);
  if (ec) throw Error("cannot create '" + replaced_path() + "': " + ec.message());
  OutputFile mark(replaced_path() + "/" + REPLACED_MARK, Links::REPLACE);
  mark.write("train --force moved the run it replaced here; deleted once the new run has saved its model\n");
  mark.commit();
  for (const char* name : RUN_FILES) {
    if (!lexists(path_ + "/" + name)) continue;
    fs::rename(path_ + "/" + name, replaced_path() + "/" + name, ec);
    if (ec) throw Error("cannot move '" + path_ + "/" + name + "' to '" + replaced_path() + "': " + ec.message());
  }
}

void RunFolder::finish() {
  // Only train's own replaced/: a user's folder of that name is theirs.
  std::error_code ec;
  if (made_by_train(replaced_path())) fs::remove_all(replaced_path(), ec);
}

}  // namespace legalnet::train
