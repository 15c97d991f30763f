#include "util/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

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

extern "C" void remove_temp_files_and_reraise(int sig) {
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

std::string errno_text() { return std::strerror(errno); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
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
  const size_t slash = target.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) {
    const std::string why = errno == ENOENT ? std::string("does not exist") : "cannot be reached (" + errno_text() + ")";
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
    const size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
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
  const std::string cannot = "which " + json_output.option + " '" + printable(json_output.path) + "' (JSON) cannot hold";
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
  temp_ = temp_name(target_);
  slot_ = register_temp(temp_);
}

AtomicPath::~AtomicPath() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
  unregister_temp(slot_);
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

void AtomicPath::commit() {
  sync();
  if (std::rename(temp_.c_str(), target_.c_str()) != 0)
    throw Error("cannot rename '" + temp_ + "' to '" + target_ + "': " + errno_text());
  committed_ = true;
}

Compression compression_for(std::string_view path) {
  if (ends_with(path, ".gz")) return Compression::GZIP;
  if (ends_with(path, ".zst")) return Compression::ZSTD;
  return Compression::NONE;
}

// ---------------------------------------------------------------------------------------
// OutputFile

struct OutputFile::Encoder {
  Compression kind;
  z_stream gz{};
  ZSTD_CCtx* zstd = nullptr;
  std::vector<char> buffer = std::vector<char>(1 << 17);
  ~Encoder() {
    if (kind == Compression::GZIP) deflateEnd(&gz);
    if (zstd) ZSTD_freeCCtx(zstd);
  }
};

OutputFile::OutputFile(const std::string& path, Links links) : path_(path) {
  if (path == "-") {
    file_ = stdout;
  } else if (links == Links::FOLLOW && is_stream_target(path)) {
    file_ = std::fopen(path.c_str(), "wb");  // a device or FIFO: written in place
    if (!file_) throw Error("cannot open '" + path + "' for writing: " + errno_text());
  } else {
    atomic_ = std::make_unique<AtomicPath>(path, links);
    // A new file, never one planted under the temporary's (predictable) name, nor a link there.
    const int fd = fcntl(atomic_->create(), F_DUPFD_CLOEXEC, 0);
    file_ = fd < 0 ? nullptr : fdopen(fd, "wb");
    if (!file_ && fd >= 0) close(fd);
    if (!file_) throw Error("cannot create '" + atomic_->temp() + "' (for '" + path + "'): " + errno_text());
  }
  if (file_ != stdout) std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  const Compression kind = compression_for(path);
  if (kind == Compression::NONE) return;
  encoder_ = std::make_unique<Encoder>();
  encoder_->kind = kind;
  if (kind == Compression::GZIP) {
    // windowBits 15 + 16 writes a gzip header (with mtime 0: outputs stay reproducible).
    if (deflateInit2(&encoder_->gz, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw Error("cannot start gzip compression for '" + path + "'");
  } else {
    encoder_->zstd = ZSTD_createCCtx();
    if (!encoder_->zstd) throw Error("cannot start zstd compression for '" + path + "'");
  }
}

OutputFile::~OutputFile() {
  if (file_ && file_ != stdout) std::fclose(file_);
}

void OutputFile::write_raw(const void* data, size_t size) {
  if (size && std::fwrite(data, 1, size, file_) != size) throw Error("cannot write '" + path_ + "': " + errno_text());
}

void OutputFile::write(std::string_view data) {
  if (!encoder_) return write_raw(data.data(), data.size());
  Encoder& e = *encoder_;
  if (e.kind == Compression::GZIP) {
    e.gz.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    e.gz.avail_in = uInt(data.size());
    while (e.gz.avail_in > 0) {
      e.gz.next_out = reinterpret_cast<Bytef*>(e.buffer.data());
      e.gz.avail_out = uInt(e.buffer.size());
      deflate(&e.gz, Z_NO_FLUSH);
      write_raw(e.buffer.data(), e.buffer.size() - e.gz.avail_out);
    }
  } else {
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{e.buffer.data(), e.buffer.size(), 0};
      const size_t rc = ZSTD_compressStream2(e.zstd, &out, &in, ZSTD_e_continue);
      if (ZSTD_isError(rc)) throw Error("zstd compression failed for '" + path_ + "': " + ZSTD_getErrorName(rc));
      write_raw(e.buffer.data(), out.pos);
    }
  }
}

void OutputFile::commit() {
  finish();
  if (atomic_) atomic_->commit();
}

void OutputFile::finish() {
  if (finished_) return;
  if (!file_) throw Error("cannot write '" + path_ + "': an earlier write failed");
  if (encoder_) {
    Encoder& e = *encoder_;
    if (e.kind == Compression::GZIP) {
      int rc;
      do {
        e.gz.next_out = reinterpret_cast<Bytef*>(e.buffer.data());
        e.gz.avail_out = uInt(e.buffer.size());
        rc = deflate(&e.gz, Z_FINISH);
        write_raw(e.buffer.data(), e.buffer.size() - e.gz.avail_out);
      } while (rc == Z_OK);
      if (rc != Z_STREAM_END) throw Error("gzip compression failed for '" + path_ + "'");
    } else {
      ZSTD_inBuffer in{nullptr, 0, 0};
      size_t remaining;
      do {
        ZSTD_outBuffer out{e.buffer.data(), e.buffer.size(), 0};
        remaining = ZSTD_compressStream2(e.zstd, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(remaining)) throw Error("zstd compression failed for '" + path_ + "'");
        write_raw(e.buffer.data(), out.pos);
      } while (remaining != 0);
    }
  }
  if (std::fflush(file_) != 0) throw Error("cannot write '" + path_ + "': " + errno_text());
  if (file_ != stdout) {
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) throw Error("cannot write '" + path_ + "': " + errno_text());
    if (atomic_) atomic_->sync();
  }
  finished_ = true;
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
  for (auto& file : files_) file->commit();
  for (auto& path : paths_) path->commit();
}

// ---------------------------------------------------------------------------------------
// Run files

int open_run_file(const std::string& path, uint64_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const std::string why = errno == ELOOP ? std::string("a symbolic link (a run's files are never read through one)")
                                           : errno_text();
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

// ---------------------------------------------------------------------------------------
// InputFile

struct InputFile::Decoder {
  Compression kind;
  z_stream gz{};
  ZSTD_DCtx* zstd = nullptr;
  std::vector<char> buffer = std::vector<char>(1 << 17);
  size_t pos = 0, end = 0;  // unread compressed bytes are buffer[pos, end)
  bool input_done = false;
  bool stream_done = false;  // the current gzip member has ended
  bool frame_open = false;   // a zstd frame is not complete yet
  ~Decoder() {
    if (kind == Compression::GZIP) inflateEnd(&gz);
    if (zstd) ZSTD_freeDCtx(zstd);
  }
};

InputFile::InputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdin;
  } else {
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) throw Error("cannot open '" + path + "': " + errno_text());
  }
  auto d = std::make_unique<Decoder>();
  d->end = read_raw(d->buffer.data(), d->buffer.size());
  const auto* b = reinterpret_cast<const unsigned char*>(d->buffer.data());
  if (d->end >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    d->kind = Compression::GZIP;
    if (inflateInit2(&d->gz, 15 + 32) != Z_OK) throw Error("cannot start gzip decompression for '" + path + "'");
  } else if (d->end >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    d->kind = Compression::ZSTD;
    d->zstd = ZSTD_createDCtx();
  } else {
    d->kind = Compression::NONE;
    // A name that promises compression over data that is not: a mistake worth stopping for,
    // not text to read as it is.
    const Compression named = compression_for(path);
    if (named != Compression::NONE && d->end > 0)
      throw Error("'" + path + "' is not " + (named == Compression::GZIP ? "gzip" : "zstd") +
                  " data, as its name says");
  }
  decoder_ = std::move(d);
}

InputFile::~InputFile() {
  if (file_ && file_ != stdin) std::fclose(file_);
}

size_t InputFile::read_raw(char* buffer, size_t size) {
  const size_t n = std::fread(buffer, 1, size, file_);
  if (n < size && std::ferror(file_)) throw Error("cannot read '" + path_ + "': " + errno_text());
  raw_bytes_read_ += n;
  return n;
}

size_t InputFile::read(char* buffer, size_t size) {
  Decoder& d = *decoder_;
  for (;;) {
    if (d.pos == d.end && !d.input_done) {
      d.end = read_raw(d.buffer.data(), d.buffer.size());
      d.pos = 0;
      d.input_done = d.end == 0;
    }
    if (d.kind == Compression::NONE) {
      const size_t n = std::min(size, d.end - d.pos);
      std::memcpy(buffer, d.buffer.data() + d.pos, n);
      d.pos += n;
      return n;
    }
    if (d.pos == d.end) {
      if ((d.kind == Compression::GZIP && !d.stream_done) || (d.kind == Compression::ZSTD && d.frame_open))
        throw Error("'" + path_ + "' is truncated (the compressed stream ends early)");
      return 0;
    }
    size_t produced = 0;
    if (d.kind == Compression::GZIP) {
      if (d.stream_done) {  // concatenated gzip members, as pigz and cat make
        inflateReset(&d.gz);
        d.stream_done = false;
      }
      d.gz.next_in = reinterpret_cast<Bytef*>(d.buffer.data() + d.pos);
      d.gz.avail_in = uInt(d.end - d.pos);
      d.gz.next_out = reinterpret_cast<Bytef*>(buffer);
      d.gz.avail_out = uInt(size);
      const int rc = inflate(&d.gz, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        throw Error("'" + path_ + "' is not valid gzip: " + (d.gz.msg ? d.gz.msg : "corrupt data"));
      d.pos = d.end - d.gz.avail_in;
      produced = size - d.gz.avail_out;
      d.stream_done = rc == Z_STREAM_END;
    } else {
      ZSTD_inBuffer in{d.buffer.data(), d.end, d.pos};
      ZSTD_outBuffer out{buffer, size, 0};
      const size_t rc = ZSTD_decompressStream(d.zstd, &out, &in);
      if (ZSTD_isError(rc)) throw Error("'" + path_ + "' is not valid zstd: " + ZSTD_getErrorName(rc));
      d.pos = in.pos;
      produced = out.pos;
      d.frame_open = rc != 0;
    }
    if (produced > 0) return produced;
  }
}

}  // namespace legalnet
