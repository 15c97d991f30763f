// The outputs of one run renamed together (util/files.h: commit_together, Outputs), and the
// completion of a group's renames that a killed run left half done.
//
// The journal is the lock file of each target the user named (target + ".lock", which the run
// holds with flock): "legalnet-commit 1\0", then the temporary and the target of each rename,
// each ended by a NUL (a Linux name may hold any other byte). It is written, synced, before the
// first rename, and emptied after the last; the lock files go when the run ends, as before.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string_view>

#include "util/error.h"
#include "util/files.h"
#include "util/text.h"

namespace legalnet {
namespace {

constexpr std::string_view JOURNAL_HEADER{"legalnet-commit 1\0", 18};
constexpr size_t MAX_JOURNAL_BYTES = 1 << 20;
constexpr size_t MAX_JOURNAL_RENAMES = 64;  // AtomicPath's own limit of live temporaries

struct Rename {
  std::string temp, target;
};

// The journal names files from the root: a reader may run in another folder than the writer.
std::string absolute(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path full = std::filesystem::absolute(path, ec);
  return ec ? path : full.lexically_normal().string();
}

// The renames a journal lists, or none when it is not one this code wrote: a header, pairs of
// names, and each temporary named as AtomicPath names them (target + ".tmp.PID.N").
std::vector<Rename> parse_journal(std::string_view text) {
  if (text.substr(0, JOURNAL_HEADER.size()) != JOURNAL_HEADER) return {};
  text.remove_prefix(JOURNAL_HEADER.size());
  std::vector<std::string> names;
  while (!text.empty()) {
    const size_t end = text.find('\0');
    if (end == std::string_view::npos || end == 0 || names.size() == 2 * MAX_JOURNAL_RENAMES) return {};
    names.emplace_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  if (names.empty() || names.size() % 2) return {};
  std::vector<Rename> renames;
  for (size_t i = 0; i < names.size(); i += 2) {
    const std::string& temp = names[i];
    const std::string& target = names[i + 1];
    const std::string prefix = target + ".tmp.";
    if (temp.compare(0, prefix.size(), prefix) != 0) return {};
    const std::string_view tail = std::string_view(temp).substr(prefix.size());
    const size_t dot = tail.find('.');
    const auto digits = [](std::string_view t) {
      return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (dot == std::string_view::npos || !digits(tail.substr(0, dot)) || !digits(tail.substr(dot + 1))) return {};
    renames.push_back({temp, target});
  }
  return renames;
}

// The contents of a lock file read by descriptor (at most MAX_JOURNAL_BYTES + 1 bytes).
std::string read_all(int fd) {
  std::string text;
  char buffer[8192];
  off_t at = 0;
  while (text.size() <= MAX_JOURNAL_BYTES) {
    const ssize_t n = pread(fd, buffer, sizeof buffer, at);
    if (n <= 0) break;
    text.append(buffer, size_t(n));
    at += n;
  }
  return text;
}

// A lock file opened to read or change it: never through a link, never waiting on a FIFO.
int open_lock(const std::string& lock) {
  const int fd = open(lock.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  return fd;
}

void write_journal(int fd, const std::string& journal, const std::string& lock) {
  if (ftruncate(fd, 0) != 0 || pwrite(fd, journal.data(), journal.size(), 0) != ssize_t(journal.size()) ||
      fdatasync(fd) != 0)
    throw Error("cannot write the list of renames into '" + printable(lock) + "': " + errno_text());
}

}  // namespace

void commit_together(const std::vector<AtomicPath*>& paths) {
  // The targets the user named (they have a lock to hold the journal) first, then the names the
  // tool chose in its folders (a run folder's files), which no journal covers.
  std::vector<AtomicPath*> journaled, rest;
  for (AtomicPath* p : paths)
    if (p) (p->lock_fd_ >= 0 ? journaled : rest).push_back(p);
  for (AtomicPath* p : journaled) p->sync();  // every file whole on disk before any name changes
  for (AtomicPath* p : rest) p->sync();
  DeferredSignals defer;
  if (journaled.size() > 1) {
    std::string journal(JOURNAL_HEADER);
    for (AtomicPath* p : journaled) {
      journal += absolute(p->temp_);
      journal += '\0';
      journal += absolute(p->target_);
      journal += '\0';
    }
    for (AtomicPath* p : journaled) {
      write_journal(p->lock_fd_, journal, p->lock_);
      sync_folder(folder_of(p->lock_));
    }
  }
  for (AtomicPath* p : journaled) p->commit();
  if (journaled.size() > 1)
    for (AtomicPath* p : journaled)  // done: no journal left to act on (the lock files go at the end)
      if (ftruncate(p->lock_fd_, 0) != 0)
        throw Error("cannot empty '" + printable(p->lock_) + "' after its renames: " + errno_text());
  for (AtomicPath* p : rest) p->commit();
}

void complete_interrupted_commit(const std::string& named) {
  // A link the user names is written through (AtomicPath's FOLLOW): its lock is beside the file.
  std::error_code ec;
  const std::string file =
      std::filesystem::is_symlink(named, ec) ? std::filesystem::weakly_canonical(named, ec).string() : named;
  const std::string lock = (ec ? named : file) + ".lock";
  const int fd = open_lock(lock);
  if (fd < 0) return;  // no lock (or one this run cannot open): no renames left to finish
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size == 0) {
    close(fd);
    return;
  }
  // A live run holding the lock is writing this target, or renaming its outputs right now:
  // wait for it to end (its lock goes with it) rather than finish its renames under it.
  flock(fd, LOCK_EX);
  const std::string journal = fstat(fd, &st) == 0 && st.st_nlink > 0 ? read_all(fd) : std::string();
  const std::vector<Rename> renames = parse_journal(journal);
  const auto is_this_lock = [&st](const Rename& r) {  // by device and inode: any spelling of it
    struct stat other;
    return lstat((r.target + ".lock").c_str(), &other) == 0 && other.st_dev == st.st_dev && other.st_ino == st.st_ino;
  };
  bool listed = false;  // the journal names this very lock file
  for (const Rename& r : renames) listed |= is_this_lock(r);
  std::vector<int> fds;  // the lock files of the group, each holding this very journal
  bool whole = listed;
  for (const Rename& r : renames) {
    if (!whole) break;
    if (is_this_lock(r)) continue;  // held already
    const int other = open_lock(r.target + ".lock");
    whole = other >= 0 && flock(other, LOCK_EX | LOCK_NB) == 0 && read_all(other) == journal;
    if (other >= 0) fds.push_back(other);
  }
  if (whole) {
    for (const Rename& r : renames) {
      struct stat temp;
      if (lstat(r.temp.c_str(), &temp) != 0 || !S_ISREG(temp.st_mode)) continue;  // renamed before the kill
      if (std::rename(r.temp.c_str(), r.target.c_str()) != 0) {
        const std::string why = errno_text();
        for (const int other : fds) close(other);
        close(fd);
        throw Error("cannot finish the renames an interrupted run listed in '" + printable(lock) + "': '" +
                    printable(r.temp) + "' to '" + printable(r.target) + "': " + why);
      }
      sync_folder(folder_of(r.target));
    }
    // Done: the lock files go, as the run would have removed them (held: no run takes them now).
    for (const Rename& r : renames) unlink((r.target + ".lock").c_str());
  }
  for (const int other : fds) close(other);
  close(fd);
}

// ---------------------------------------------------------------------------------------
// Outputs

void Outputs::add(std::unique_ptr<OutputFile> file) {
  file->finish();
  files_.push_back(std::move(file));
}

void Outputs::add(std::unique_ptr<AtomicPath> path) {
  path->sync();
  paths_.push_back(std::move(path));
}

void Outputs::commit() {
  std::vector<AtomicPath*> all;
  for (auto& file : files_) all.push_back(file->atomic());
  for (auto& path : paths_) all.push_back(path.get());
  commit_together(all);
}

}  // namespace legalnet
