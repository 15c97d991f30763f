#include "train/run_folder.h"

#include <sys/stat.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "util/error.h"
#include "util/json.h"
#include "util/text.h"

namespace legalnet::train {
namespace {

namespace fs = std::filesystem;

// model.pt and checkpoint.pt are a run of an earlier legalnet (TorchScript files, no longer
// read): counted as a run, so that only --force replaces them, and moved to replaced/ with it.
constexpr const char* RUN_FILES[] = {"model.safetensors", "checkpoint.safetensors", "metrics.csv",
                                     "options.json",      RunFolder::EVENTS_FILE,   RunFolder::MODEL_CARD,
                                     "model.pt",          "checkpoint.pt",          RunFolder::EVALUATE_EVENTS_FILE};
// Where --force gathers the run it replaces before that folder takes the name replaced/ whole.
constexpr const char* INCOMING = "replaced.incoming";
constexpr const char* OLD_CHECKPOINT = "checkpoint.pt";

// Whether `name` is a temporary of a run file: "<run file>.tmp.<pid>.<n>" (util/files.cpp).
bool is_run_file_temporary(const std::string& name) {
  for (const char* file : RUN_FILES) {
    const std::string prefix = std::string(file) + ".tmp.";
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    const auto digits = [](const std::string& s) {
      return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (dot != std::string::npos && digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1))) return true;
  }
  return false;
}

// metrics.csv and the events file: a row and a few records every --eval-every steps (kilobytes a
// thousand steps); a file past this cap is not a log train wrote.
constexpr uint64_t MAX_LOG_BYTES = uint64_t(1) << 30;

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
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && lstat((dir + "/" + REPLACED_MARK).c_str(), &st) == 0 &&
         S_ISREG(st.st_mode);
}

// Opens a run file to append to: never through a link (O_NOFOLLOW), nor into anything but a plain file.
int open_for_append(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int error = errno;
    if (fd >= 0) close(fd);
    throw Error("cannot append to '" + path + "': " +
                (fd < 0 && error == ELOOP ? std::string("a symbolic link (a run's files are never written through one)")
                 : fd < 0                 ? std::string(std::strerror(error))
                                          : std::string("not a plain file")));
  }
  return fd;
}

// Writes all of `bytes` at the end of the file (one write(2) when it can: a reader never
// sees the part of a record a signal split off).
void append(int fd, const std::string& path, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write '" + path + "': " + std::strerror(errno));
    done += size_t(n);
  }
}

// The seconds since 1970 that events carry (TensorBoard's "wall" and "relative" axes).
double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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
  if (events_fd_ >= 0) close(events_fd_);
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
      throw Error("'" + path_ +
                  "' is in use by another train (it holds the folder's lock); wait for it to end, or use "
                  "another --out");
    throw Error("cannot lock the run folder '" + path_ + "': " + std::strerror(error));
  }
  lock_fd_ = fd;
}

void RunFolder::start(const std::string& options_json, const std::string& csv_header) {
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) throw Error("cannot create the run folder '" + path_ + "': " + ec.message());
  lock();
  // Temporaries a killed train left (SIGKILL runs no cleanup; a checkpoint's is the model's
  // size): the lock says no other train writes here, so each is an orphan. unlink removes a
  // link, never what it points to.
  for (const auto& entry : fs::directory_iterator(path_, ec))
    if (is_run_file_temporary(entry.path().filename().string())) unlink(entry.path().c_str());
  restore_incoming();
  // Another train may have started a run here since this one looked (it held no lock then).
  if (!resume_ && !force_ &&
      (fs::exists(checkpoint_path()) || fs::exists(model_path()) || fs::exists(path_ + "/" + OLD_CHECKPOINT)))
    throw Error("'" + path_ + "' already holds a run; use --resume to continue it or --force to start over");
  if (!resume_) {
    if (force_) replace_previous_run();
    OutputFile header(metrics_path(), Links::REPLACE);
    header.write(csv_header);
    header.commit();
  } else {
    keep_metrics_through_checkpoint();
  }
  metrics_fd_ = open_for_append(metrics_path());
  start_events();
  rewrite_options(options_json);
}

void RunFolder::rewrite_options(const std::string& options_json) {
  OutputFile json(options_path(), Links::REPLACE);
  json.write(options_json + "\n");
  json.commit();
}

// The events file is a live log, like metrics.csv: TensorBoard reads it while the run appends
// records, so it is made whole under a temporary name (its file_version record, or what a
// resumed run keeps) and then appended to in place, a record at a time. Its wall times make
// it differ between two runs of the same seed, as metrics.csv's times do.
void RunFolder::start_events() {
  std::string kept;  // a resumed run's records through its checkpoint, when others follow them
  bool make = !resume_ || !lexists(events_path());
  if (!make) {
    struct stat st;
    if (lstat(events_path().c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      throw Error(
          "cannot append to '" + events_path() + "': " +
          (S_ISLNK(st.st_mode) ? "a symbolic link (a run's files are never written through one)" : "not a plain file"));
    const std::string file = read_run_file(events_path(), MAX_LOG_BYTES);
    const size_t through = tensorboard::records_through_step(file, last_checkpoint_step_);
    make = through < file.size();
    kept = file.substr(0, through);
  }
  if (make) {
    OutputFile out(events_path(), Links::REPLACE);
    out.write(kept.empty() ? tensorboard::record(tensorboard::file_version_event(wall_time())) : kept);
    out.commit();
  }
  events_fd_ = open_for_append(events_path());
}

// metrics.csv's first column is the step (train's METRICS_COLUMNS); a file that does not
// start so, or a link (which start() refuses to append to), is left as it is.
void RunFolder::keep_metrics_through_checkpoint() {
  struct stat st;
  if (lstat(metrics_path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const std::string text = read_run_file(metrics_path(), MAX_LOG_BYTES);
  if (!text.starts_with("step,")) return;
  size_t kept = text.find('\n');
  if (kept == std::string::npos) return;
  for (++kept; kept < text.size();) {
    const size_t end = text.find('\n', kept);
    if (end == std::string::npos) break;  // a row torn by a crash
    int64_t step = 0;
    const auto [field_end, error] = std::from_chars(text.data() + kept, text.data() + end, step);
    if (error != std::errc() || *field_end != ',' || step > last_checkpoint_step_) break;
    kept = end + 1;
  }
  if (kept == text.size()) return;
  OutputFile out(metrics_path(), Links::REPLACE);
  out.write(std::string_view(text).substr(0, kept));
  out.commit();
}

void RunFolder::append_metrics(const std::string& row, int64_t step, const std::vector<tensorboard::Scalar>& scalars,
                               const std::vector<std::string>& values) {
  append(metrics_fd_, metrics_path(), row);
  std::vector<std::string> all;
  for (const tensorboard::Scalar& s : scalars) all.push_back(tensorboard::scalar_value(s));
  all.insert(all.end(), values.begin(), values.end());
  append(events_fd_, events_path(), tensorboard::record(tensorboard::summary_event(wall_time(), step, all)));
}

// replaced/ holds the last run that finished (or was paused) before --force, until a new
// model is saved. A --force run that fails leaves its files here and replaced/ pending; the
// next --force discards those files (a run that never finished is what --force starts over)
// and keeps replaced/: two failed runs in a row never cost the finished one. The run is gathered
// in replaced.incoming/ and that folder renamed to replaced/ whole, so a train killed on the way
// leaves it in one of the two, and the next train puts an incomplete one back first.
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
  const std::string incoming = path_ + "/" + INCOMING;
  fs::create_directory(incoming, ec);
  if (ec) throw Error("cannot create '" + incoming + "': " + ec.message());
  for (const char* name : RUN_FILES) {
    if (!lexists(path_ + "/" + name)) continue;
    fs::rename(path_ + "/" + name, incoming + "/" + name, ec);
    if (ec) throw Error("cannot move '" + path_ + "/" + name + "' to '" + incoming + "': " + ec.message());
  }
  OutputFile mark(incoming + "/" + REPLACED_MARK, Links::REPLACE);
  mark.write("train --force moved the run it replaced here; deleted once the new run has saved its model\n");
  mark.commit();
  // A finished run here is newer than a pending replaced/: that one was superseded.
  if (pending) fs::remove_all(replaced_path(), ec);
  if (ec) throw Error("cannot remove '" + replaced_path() + "': " + ec.message());
  fs::rename(incoming, replaced_path(), ec);
  if (ec) throw Error("cannot move '" + incoming + "' to '" + replaced_path() + "': " + ec.message());
  sync_folder(path_);
}

// A replaced.incoming/ that a killed --force left: its files go back where they were (none of
// them has a newer copy here: the move takes each name away), and the folder goes.
void RunFolder::restore_incoming() {
  const std::string incoming = path_ + "/" + INCOMING;
  struct stat st {};
  if (lstat(incoming.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) throw Error("'" + incoming + "' is not a folder train made; move it away first");
  std::error_code ec;
  for (const char* name : RUN_FILES) {
    const std::string from = incoming + "/" + name, to = path_ + "/" + name;
    if (!lexists(from) || lexists(to)) continue;
    fs::rename(from, to, ec);
    if (ec) throw Error("cannot move '" + from + "' back to '" + to + "': " + ec.message());
  }
  fs::remove_all(incoming, ec);
  if (ec) throw Error("cannot remove '" + incoming + "': " + ec.message());
}

void RunFolder::finish() {
  // Only train's own replaced/: a user's folder of that name is theirs.
  std::error_code ec;
  if (made_by_train(replaced_path())) fs::remove_all(replaced_path(), ec);
}

}  // namespace legalnet::train
