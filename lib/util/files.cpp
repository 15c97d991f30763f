#include "util/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include "util/error.h"
#include "util/text.h"

namespace legalnet {
namespace {

// Paths the signal handler removes. Fixed storage, because a handler may not allocate.
constexpr int MAX_TEMP_FILES = 64;
constexpr size_t MAX_TEMP_PATH = 4096;
char temp_paths[MAX_TEMP_FILES][MAX_TEMP_PATH];
std::atomic<bool> temp_in_use[MAX_TEMP_FILES];
std::mutex temp_mutex;

// DeferredSignals: while `deferring` > 0 a signal is recorded in `deferred`, not acted on.
std::atomic<int> deferring{0};
std::atomic<int> deferred{0};

extern "C" void remove_temp_files_and_reraise(int sig) {
  if (deferring.load() > 0) {
    deferred.store(sig);
    return;
  }
  for (int i = 0; i < MAX_TEMP_FILES; ++i)
    if (temp_in_use[i].load()) unlink(temp_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

int register_temp(const std::string& path) {
  if (path.size() >= MAX_TEMP_PATH) return -1;
  std::lock_guard<std::mutex> lock(temp_mutex);
  for (int i = 0; i < MAX_TEMP_FILES; ++i) {
    if (!temp_in_use[i].load()) {
      std::memcpy(temp_paths[i], path.c_str(), path.size() + 1);
      temp_in_use[i].store(true);
      return i;
    }
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) temp_in_use[slot].store(false);
}

// The file a path finally names, following symbolic links (a dangling link names the file it
// would create).
std::string follow_links(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::vector<char> buffer(size_t(st.st_size > 0 ? st.st_size : 4096) + 1);
    const ssize_t n = readlink(path.c_str(), buffer.data(), buffer.size() - 1);
    if (n < 0) return path;
    std::string link(buffer.data(), size_t(n));
    if (link.empty() || link[0] != '/') {
      const size_t slash = path.find_last_of('/');
      if (slash != std::string::npos) link = path.substr(0, slash + 1) + link;
    }
    path = link;
  }
  throw Error("'" + path + "': too many levels of symbolic links");
}

// The same file: by device and inode when both exist, else by resolved absolute path. An
// output that REPLACEs a link under its name is the link itself, not what it points to.
bool same_file(const std::string& a, const std::string& b, Links a_links = Links::FOLLOW) {
  struct stat sa, sb;
  const bool a_exists = (a_links == Links::REPLACE ? lstat(a.c_str(), &sa) : stat(a.c_str(), &sa)) == 0,
             b_exists = stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  std::error_code ec1, ec2;
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a), ec1);
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b), ec2);
  return !ec1 && !ec2 && ca == cb;
}

}  // namespace

void check_outputs_are_not_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty() || out.path == "-") continue;
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && in.path != "-" && same_file(out.path, in.path, out.links))
        throw Error(out.option + " '" + out.path + "' is also an input of this run (" + in.option + " '" + in.path +
                    "'); writing it would destroy what is being read");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && outputs[j].path != "-" && same_file(out.path, outputs[j].path))
        throw Error(out.option + " '" + out.path + "' and " + outputs[j].option + " '" + outputs[j].path +
                    "' are the same file");
  }
}

namespace {

// Where `text` stops being UTF-8 (C1 controls included: JSON holds them, escaped); npos if never.
size_t first_non_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b < 0x80) {
      ++i;
    } else if (b == 0xC2 && i + 1 < text.size() && static_cast<uint8_t>(text[i + 1]) >= 0x80 &&
               static_cast<uint8_t>(text[i + 1]) <= 0x9F) {
      i += 2;
    } else if (const size_t n = printable_utf8_length(text, i); n) {
      i += n;
    } else {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

void check_output_writable(const NamedPath& output) {
  if (output.path.empty() || output.path == "-") return;
  const std::string named = output.option + " '" + printable(output.path) + "'";
  struct stat st;
  if (stat(output.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error("'" + printable(output.path) + "' is a directory, not a file to write");
  // A link the user names is written through: the temporary goes next to the file it names.
  const std::string target = follow_links(output.path);
  const std::string dir = folder_of(target);
  if (stat(dir.c_str(), &st) != 0) {
    const std::string why =
        errno == ENOENT ? std::string("does not exist") : "cannot be reached (" + errno_text() + ")";
    throw Error(named + ": its folder '" + printable(dir) + "' " + why);
  }
  if (!S_ISDIR(st.st_mode)) throw Error(named + ": '" + printable(dir) + "' is not a folder");
  if (access(dir.c_str(), W_OK | X_OK) != 0 && !is_stream_target(output.path)) {
    const std::string why = errno_text();
    throw Error(named + ": cannot write in its folder '" + printable(dir) + "' (" + why + ")");
  }
}

void check_output_folder(const NamedPath& folder) {
  const std::string named = folder.option + " '" + printable(folder.path) + "'";
  std::string dir = folder.path;
  struct stat st;
  while (stat(dir.c_str(), &st) != 0) {  // the nearest part of the path that exists
    if (errno != ENOENT && errno != ENOTDIR) {
      const std::string why = errno_text();
      throw Error(named + ": cannot reach '" + printable(dir) + "' (" + why + ")");
    }
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    dir = folder_of(dir);
  }
  if (!S_ISDIR(st.st_mode)) throw Error(named + ": '" + printable(dir) + "' is not a folder");
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    const std::string why = errno_text();
    throw Error(named + ": cannot write in '" + printable(dir) + "' (" + why + ")");
  }
}

void check_json_text(const std::string& what, const std::string& text, const NamedPath& json_output) {
  const size_t bad = first_non_utf8(text);
  if (bad == std::string_view::npos) return;
  const std::string cannot =
      "which " + json_output.option + " '" + printable(json_output.path) + "' (JSON) cannot hold";
  // In a command line, the word that holds the byte.
  const size_t begin = text.rfind(' ', bad) == std::string::npos ? 0 : text.rfind(' ', bad) + 1;
  const std::string word = text.substr(begin, text.find(' ', bad) - begin);
  if (word == text) throw Error(what + " '" + printable(text) + "' is not UTF-8 text, " + cannot + "; rename it");
  throw Error(what + " holds '" + printable(word) + "', not UTF-8 text, " + cannot);
}

bool is_stream_target(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  if (S_ISDIR(st.st_mode)) throw Error("'" + path + "' is a directory, not a file to write");
  return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode);
}

namespace {
// target + ".tmp.<pid>.<n>", n counting up over the process.
std::string temp_name(const std::string& target) {
  static std::atomic<int> counter{0};
  return target + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}
}  // namespace

void install_temp_file_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A signal ignored when the tool started (nohup, a shell's background job) stays ignored:
    // the user asked the run to survive it.
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      std::signal(sig, remove_temp_files_and_reraise);
    }
  });
}

DeferredSignals::DeferredSignals() { deferring.fetch_add(1); }

DeferredSignals::~DeferredSignals() {
  if (deferring.fetch_sub(1) != 1) return;
  if (const int sig = deferred.exchange(0)) remove_temp_files_and_reraise(sig);
}

AtomicPath::AtomicPath(std::string target, Links links)
    : target_(links == Links::FOLLOW ? follow_links(target) : target) {
  struct stat st;
  // REPLACE: a link is looked at, not through; the rename replaces the link itself.
  const bool exists = (links == Links::FOLLOW ? stat(target_.c_str(), &st) : lstat(target_.c_str(), &st)) == 0;
  if (exists && !S_ISLNK(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw Error("'" + target + "' is a directory, not a file to write");
    if (!S_ISREG(st.st_mode))
      throw Error("'" + target + "' is a device, FIFO or socket; this output must be a regular file");
  }
  install_temp_file_cleanup();
  if (links == Links::FOLLOW) {
    complete_interrupted_commit(target_);  // another run's renames onto this name, finished first
    lock_target(target);
  }
  temp_ = temp_name(target_);
  slot_ = register_temp(temp_);
}

void AtomicPath::lock_target(const std::string& named) {
  lock_ = target_ + ".lock";
  for (int tries = 0; tries < 16; ++tries) {
    // O_NOFOLLOW: a link planted under the lock's name is refused, never written through.
    const int fd = open(lock_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) throw Error("cannot create '" + lock_ + "', the lock of '" + named + "': " + errno_text());
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      close(fd);
      if (error == EWOULDBLOCK)
        throw Error("'" + named + "' is being written by another run (it holds '" + lock_ +
                    "'); wait for that run, or write elsewhere");
      errno = error;
      throw Error("cannot lock '" + lock_ + "' for '" + named + "': " + errno_text());
    }
    // The lock holds only while the file is the one under the name: a run that finished
    // unlinks its lock, and one that took the name again may have made another.
    struct stat by_fd, by_name;
    if (fstat(fd, &by_fd) == 0 && lstat(lock_.c_str(), &by_name) == 0 && by_fd.st_dev == by_name.st_dev &&
        by_fd.st_ino == by_name.st_ino) {
      lock_fd_ = fd;
      lock_slot_ = register_temp(lock_);  // gone with the temporary on SIGINT, SIGTERM or SIGHUP
      return;
    }
    close(fd);
  }
  throw Error("cannot lock '" + lock_ + "' for '" + named + "': it keeps being replaced");
}

AtomicPath::~AtomicPath() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
  unregister_temp(slot_);
  if (lock_fd_ >= 0) {  // unlinked while still held: no other run locks the old file meanwhile
    unlink(lock_.c_str());
    close(lock_fd_);
    unregister_temp(lock_slot_);
  }
}

int AtomicPath::create() {
  if (fd_ >= 0) return fd_;
  // A name someone took first (a file or a link planted for a range of process ids) is left
  // alone: the next number is tried.
  for (int tries = 0;; ++tries) {
    fd_ = open(temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) return fd_;
    if (errno != EEXIST || tries == 1000)
      throw Error("cannot create '" + temp_ + "' (for '" + target_ + "'): " + errno_text());
    unregister_temp(slot_);
    temp_ = temp_name(target_);
    slot_ = register_temp(temp_);
  }
}

std::string AtomicPath::created_name() {
  const int fd = create();
  const std::string name = "/proc/self/fd/" + std::to_string(fd);
  struct stat by_name, by_fd;
  if (stat(name.c_str(), &by_name) == 0 && fstat(fd, &by_fd) == 0 && by_name.st_dev == by_fd.st_dev &&
      by_name.st_ino == by_fd.st_ino)
    return name;
  return temp_;  // no /proc: the name this process has just created, in the target's folder
}

void AtomicPath::sync() {
  if (synced_) return;
  // The data must be on disk before the name says the file is complete.
  if (fd_ >= 0) {
    if (fsync(fd_) != 0 && errno != EINVAL) throw Error("cannot sync '" + temp_ + "': " + errno_text());
    synced_ = true;
    return;
  }
  const int fd = open(temp_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
    const std::string why = errno_text();
    if (fd >= 0) close(fd);
    throw Error("cannot sync '" + temp_ + "': " + why);
  }
  close(fd);
  synced_ = true;
}

std::string errno_text() { return std::strerror(errno); }

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

void sync_folder(const std::string& folder) {
  const int fd = open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // a folder that cannot be opened to read cannot be synced either: the rename stands
  const int status = fsync(fd), error = errno;
  close(fd);
  // EINVAL: a file system without directory sync (some network and FUSE ones).
  if (status != 0 && error != EINVAL) throw Error("cannot sync the folder '" + folder + "': " + std::strerror(error));
}

void AtomicPath::commit() {
  sync();
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw Error("cannot rename '" + temp_ + "' to '" + target_ + "': " + errno_text());
  committed_ = true;
  sync_folder(folder_of(target_));
}

// ---------------------------------------------------------------------------------------
// Run files

int open_run_file(const std::string& path, uint64_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const std::string why =
        errno == ELOOP ? std::string("a symbolic link (a run's files are never read through one)") : errno_text();
    throw Error("cannot read '" + printable(path) + "': " + why);
  }
  struct stat st;
  std::string why;
  if (fstat(fd, &st) != 0)
    why = errno_text();
  else if (!S_ISREG(st.st_mode))
    why = "not a regular file (a device, FIFO or socket is never read as a run's file)";
  else if (uint64_t(st.st_size) > max_bytes)
    why = std::to_string(st.st_size) + " bytes, more than such a file can hold (" + std::to_string(max_bytes) + ")";
  if (!why.empty()) {
    close(fd);
    throw Error("cannot read '" + printable(path) + "': " + why);
  }
  return fd;
}

std::string read_run_file(const std::string& path, uint64_t max_bytes) {
  const int fd = open_run_file(path, max_bytes);
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = errno_text();
      close(fd);
      throw Error("cannot read '" + printable(path) + "': " + why);
    }
    if (n == 0) break;
    text.append(buffer, size_t(n));
    if (text.size() > max_bytes) {  // grown since it was measured
      close(fd);
      throw Error("cannot read '" + printable(path) + "': more than such a file can hold (" +
                  std::to_string(max_bytes) + " bytes)");
    }
  }
  close(fd);
  return text;
}

}  // namespace legalnet
