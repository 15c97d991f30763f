// Files that are never seen half-written, and streams that (de)compress gzip and zstd.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace legalnet {

// What an output does with a symbolic link under its name. A path the user names is written
// through (FOLLOW: the file it points to is replaced, the link stays), as the user meant. A
// name the tool chooses itself inside a folder (a run's metrics.csv, a gallery's pictures) is
// never followed (REPLACE: the link itself is replaced, what it points to is untouched): in a
// shared folder anyone may have planted it.
enum class Links { FOLLOW, REPLACE };

// A temporary path next to `target` (target + ".tmp.<pid>.<n>"), renamed onto the target by
// commit() and removed by the destructor, or by SIGINT/SIGTERM/SIGHUP, if not committed.
// An interrupted or failed run therefore never leaves a file under the target's name.
// A directory, device, FIFO or socket at the target is refused before anything is written.
// A target the user names (FOLLOW) is locked while the AtomicPath lives (an flock on
// target + ".lock", removed at the end): a second run writing the same output is refused in
// one line at its start, instead of the two runs' files being mixed.
class AtomicPath {
 public:
  explicit AtomicPath(std::string target, Links links = Links::FOLLOW);
  ~AtomicPath();
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;

  const std::string& temp() const { return temp_; }
  const std::string& target() const { return target_; }
  bool committed() const { return committed_; }
  // Creates the temporary as a new file (O_CREAT | O_EXCL | O_NOFOLLOW: never a file or link
  // planted under its predictable name) and returns its descriptor, owned here until the
  // destructor or commit(). For writers that take a descriptor (a helper's stdout).
  int create();
  // create(), then a name that opens that very file and no other: /proc/self/fd/N (a writer
  // such as HDF5 that takes only a name and opens it with O_TRUNC, following links, reaches
  // the file created here even if someone swaps what lies under the temporary's name).
  // Where /proc is not mounted, the temporary's own name.
  std::string created_name();
  // Puts the temporary's data on disk (once); throws legalnet::Error on failure.
  void sync();
  // sync(), then renames the temporary onto the target; throws legalnet::Error on failure.
  void commit();

 private:
  friend void commit_together(const std::vector<AtomicPath*>& paths);
  void lock_target(const std::string& named);

  std::string target_;
  std::string temp_;
  std::string lock_;
  int slot_ = -1;  // entry in the signal handler's list of paths to remove
  int lock_fd_ = -1, lock_slot_ = -1;
  int fd_ = -1;  // the temporary, once create() made it
  bool synced_ = false, committed_ = false;
};

// Renames the temporaries of one run's outputs onto their targets, as nearly one step as POSIX
// allows. SIGINT, SIGTERM and SIGHUP wait for the last rename (DeferredSignals). Before the
// first, the lock file of each target the user named (AtomicPath's FOLLOW) records the whole
// list of renames, synced: a journal. A run killed between two renames (SIGKILL, a power loss)
// leaves it, and the next run that writes or reads one of those targets completes the renames
// first (complete_interrupted_commit): nobody reads one run's train.h5 beside another's val.h5.
// Null entries are skipped. Throws legalnet::Error naming the file at fault.
void commit_together(const std::vector<AtomicPath*>& paths);

// Completes the renames that an interrupted commit_together listed in `target`'s lock file
// (nothing when there is none), waiting first for a live run that holds the lock. A journal is
// acted on only where every target it lists holds the same one in its own lock file, and a
// temporary is renamed only when it is a regular file under the name its target implies:
// a file planted beside an input can never make a reader move anything else. Called by
// AtomicPath for its target, and by the readers of datasets and input files.
void complete_interrupted_commit(const std::string& target);

// While one lives, SIGINT, SIGTERM and SIGHUP wait: the temporaries' handler records the
// signal, and the last DeferredSignals to end acts on it (the run then ends as it would have).
class DeferredSignals {
 public:
  DeferredSignals();
  ~DeferredSignals();
  DeferredSignals(const DeferredSignals&) = delete;
  DeferredSignals& operator=(const DeferredSignals&) = delete;
};

// An output as a tool's option names it, or an input it reads.
struct NamedPath {
  std::string option;           // "--out", "--in", ...
  std::string path;             // "-" (stdin/stdout) is never compared
  Links links = Links::FOLLOW;  // an output: REPLACE when the rename replaces a link itself
};

// Refuses, before any work, an output that is also an input of the same run (the same file,
// by device and inode, or the same path once resolved) or two outputs that are one file.
void check_outputs_are_not_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Whether an output path names a device, FIFO or socket: such targets are written in place
// (there is nothing to rename onto them). Throws legalnet::Error for a directory.
bool is_stream_target(const std::string& path);

// Refuses, before any work, an output that could not be written at the end: its folder is
// missing, not a folder or not writable, or a directory holds its name. ("-" passes.)
void check_output_writable(const NamedPath& output);

// Refuses, before any work, a folder the run will write files in that it could not: one that
// exists but is not a folder or not writable, or, when it is to be made, whose nearest
// existing parent is not a writable folder.
void check_output_folder(const NamedPath& folder);

// Refuses, before any work, text a JSON output will hold that is not UTF-8 (JSON holds only
// Unicode text, and a name on Linux may be any bytes): `what` names the text, as "--in".
void check_json_text(const std::string& what, const std::string& text, const NamedPath& json_output);

enum class Compression { NONE, GZIP, ZSTD };
// Compression chosen by a file name's extension: .gz or .zst.
Compression compression_for(std::string_view path);

// A buffered output file written through AtomicPath and compressed by its extension;
// "-" is stdout, and a device or FIFO is written directly. Every write error names the file
// and the reason.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path, Links links = Links::FOLLOW);
  ~OutputFile();
  void write(std::string_view data);
  // Completes compression, flushes and syncs: the file is whole under its temporary name.
  // A run with several outputs finishes them all, then commits them all: one that fails
  // while writing any of them leaves none of them renamed.
  void finish();
  // finish() (unless done), then renames onto the target.
  void commit();
  const std::string& path() const { return path_; }
  // The temporary this file is written under; null for stdout, a device or a FIFO.
  AtomicPath* atomic() { return atomic_.get(); }

 private:
  struct Encoder;
  void write_raw(const void* data, size_t size);
  std::string path_;
  std::unique_ptr<AtomicPath> atomic_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Encoder> encoder_;
  bool finished_ = false;
};

// The outputs of one run, taking their names together: each is complete (written and synced
// under its temporary name) when added, and commit() renames them all (commit_together). A run
// that fails before commit() leaves no new file under any output's name.
class Outputs {
 public:
  void add(std::unique_ptr<OutputFile> file);  // finished here if it is not yet
  void add(std::unique_ptr<AtomicPath> path);  // a temporary another writer completed
  void commit();

 private:
  std::vector<std::unique_ptr<OutputFile>> files_;
  std::vector<std::unique_ptr<AtomicPath>> paths_;
};

// Reads a plain, gzip or zstd file (detected from its first bytes, not its name); "-" is stdin.
// A reader that takes the whole file before any work (a FEN list) asks for a regular file:
// opened without waiting, so that a FIFO nobody writes, or a device, is one line, not a hang.
enum class InputKind { ANY, REGULAR };

class InputFile {
 public:
  explicit InputFile(const std::string& path, InputKind kind = InputKind::ANY);
  ~InputFile();
  // Reads up to `size` bytes of decompressed data; 0 at the end. Throws legalnet::Error.
  size_t read(char* buffer, size_t size);
  const std::string& path() const { return path_; }
  // Bytes read from the file itself (compressed), for progress against its size.
  uint64_t raw_bytes_read() const { return raw_bytes_read_; }

 private:
  struct Decoder;
  uint64_t raw_bytes_read_ = 0;
  size_t read_raw(char* buffer, size_t size);
  std::string path_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Decoder> decoder_;
};

// A file of the tool's own read by the run-file rules (a run's options.json, a checkpoint): a
// regular file, never through a symbolic link (O_NOFOLLOW), opened without waiting (O_NONBLOCK:
// a FIFO planted there never blocks), at most `max_bytes` (a link to /dev/zero or a grown
// file never fills memory). Throws legalnet::Error naming the file and the rule it breaks.
std::string read_run_file(const std::string& path, uint64_t max_bytes);
// The same rules, for a reader that takes the descriptor: returns it, open, checked and
// owned by the caller.
int open_run_file(const std::string& path, uint64_t max_bytes);

// The folder that holds `path`'s file: "." for a bare name, "/" for a file at the root.
std::string folder_of(const std::string& path);
// strerror(errno), for the messages of failed system calls.
std::string errno_text();

// Makes a folder's entries durable (a rename into it survives a power loss); throws
// legalnet::Error when the sync fails.
void sync_folder(const std::string& folder);

// Removes every registered temporary file, then restores the default action and re-raises;
// installed once by the first AtomicPath.
void install_temp_file_cleanup();

}  // namespace legalnet
