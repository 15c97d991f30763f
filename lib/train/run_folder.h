// A training run's folder: options.json, metrics.csv, TensorBoard's events file,
// checkpoint.safetensors and model.safetensors, with the rules that keep earlier work safe. No
// torch here: the trainer saves into the paths it gives.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "train/tensorboard.h"
#include "util/files.h"

namespace legalnet::train {

// An option --resume must keep, as the resume check compares it: a JSON pointer into options.json
// ("/lr", or "/model/hidden" inside an object) and the name its message gives it ("--lr").
struct KeptOption {
  std::string pointer;
  std::string option;
};
// A dataset option --resume must keep: options.json's `key` (the paths as spelled), its
// `files_key` (each file's resolved path, counts and fingerprint, data/dataset_identity.h) and
// the option's name.
struct KeptData {
  std::string key, files_key, option;
};

class RunFolder {
 public:
  // Checks, before any costly work, that `path` can hold this run: not a file, and either
  // without a run, resumed (--resume: a checkpoint must be there) or replaced (--force).
  // `inputs` are the run's datasets, which none of the folder's files may be.
  RunFolder(std::string path, bool resume, bool force, const std::vector<NamedPath>& inputs);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  // One train at a time in a folder: an flock on the folder itself, held until this object
  // ends. The kernel drops it when its process dies, so a crashed run never blocks the next.
  // Taken here when the folder exists (rank 0 only: the other ranks share its run), else by
  // start() once it has made the folder. Throws when another process holds it.
  void lock();
  // --resume: `options_json` (what this command line would record) must agree with the run's
  // options.json on every `kept` option (those that decide what the run learns; the ones that
  // only say how long or where it runs may change). Names the first option that differs, the
  // ones inside an object ("/model/...") first. The `data` too: the same files (by resolved
  // path) holding the same rows (counts and a fingerprint), whatever the paths' spelling.
  // options.json is read by the run-file rules (util/files.h read_run_file), and one that lacks
  // a key to compare is refused.
  void check_resumed_options(const std::string& options_json, const std::vector<KeptOption>& kept,
                             const std::vector<KeptData>& data) const;

  // --resume: a string the run's options.json records at its top level (a fact such as
  // "compute_precision"), or nothing where it has none or cannot be read.
  std::optional<std::string> recorded(const std::string& key) const;

  std::string model_path() const { return path_ + "/model.safetensors"; }
  std::string checkpoint_path() const { return path_ + "/checkpoint.safetensors"; }
  std::string metrics_path() const { return path_ + "/metrics.csv"; }
  std::string options_path() const { return path_ + "/options.json"; }
  std::string replaced_path() const { return path_ + "/replaced"; }
  // TensorBoard's curves of metrics.csv's rows (`tensorboard --logdir` the folder or one above).
  // TensorBoard reads any file with "tfevents" in its name; the usual name's timestamp and host
  // are left out so that --resume and --force find it: one file a run, appended to.
  std::string events_path() const { return path_ + "/" + EVENTS_FILE; }
  // The largest options.json a run reads back (train writes a few KB).
  static constexpr uint64_t MAX_OPTIONS_BYTES = uint64_t(1) << 20;
  static constexpr const char* EVENTS_FILE = "events.out.tfevents.train";
  // evaluate's figures of the run's model, at its step (run/evaluate/tensorboard_figures.h): a
  // file of its own, whose name sorts after the train's (a running TensorBoard reads the files of
  // a run in name order, and moves on to a later one only). A run file: --force moves it too.
  static constexpr const char* EVALUATE_EVENTS_FILE = "events.out.tfevents.train.evaluate";
  static constexpr const char* MODEL_CARD = "MODEL_CARD.md";
  std::string model_card_path() const { return path_ + "/" + MODEL_CARD; }

  // Creates the folder and writes options.json; a new run also starts metrics.csv and the
  // events file, a resumed one appends to them (the rows and events after its checkpoint's
  // step, which a run that died after its last checkpoint wrote, are dropped: the resumed run
  // writes those steps again, and TensorBoard would draw both). With
  // --force, the previous run's files move to replaced/ first (a folder marked as train's),
  // and stay there until this run has saved its model: failed new runs never cost the
  // finished old one. The run's files are written under their names, never through a link.
  void start(const std::string& options_json, const std::string& csv_header);
  // Replaces options.json whole (a temporary renamed): a run whose end moved (--time-budget)
  // records where, so that a run stopped at any point can be rerun or resumed.
  void rewrite_options(const std::string& options_json);
  // Appends one metrics row, and its values as TensorBoard scalars at `step` (each written at
  // once, unbuffered: the files are read while training runs), in one event with `values`
  // (further Summary.Value messages: the run's hparams and recipe, with its first row).
  void append_metrics(const std::string& row, int64_t step, const std::vector<tensorboard::Scalar>& scalars,
                      const std::vector<std::string>& values = {});
  // The step of the last checkpoint this process wrote or resumed from; -1 when none.
  void checkpoint_written(int64_t step) { last_checkpoint_step_ = step; }
  int64_t last_checkpoint_step() const { return last_checkpoint_step_; }
  // After the model is saved: the replaced run, if any, is deleted (only a replaced/ train made).
  void finish();

 private:
  void replace_previous_run();
  void restore_incoming();
  void start_events();
  void keep_metrics_through_checkpoint();
  std::string path_;
  bool resume_, force_;
  int metrics_fd_ = -1;  // metrics.csv, appended to
  int events_fd_ = -1;   // the events file, appended to
  int lock_fd_ = -1;
  int64_t last_checkpoint_step_ = -1;
};

}  // namespace legalnet::train
