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

// The same file: by device and inode when both exist, else by resolved absolute path.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  const bool a_exists = stat(a.c_str(), &sa) == 0, b_exists = stat(b.c_str(), &sb) == 0;
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
      if (!in.path.empty() && in.path != "-" && same_file(out.path, in.path))
        throw Error(out.option + " '" + out.path + "' is also an input of this run (" + in.option + " '" + in.path +
                    "'); writing it would destroy what is being read");
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && outputs[j].path != "-" && same_file(out.path, outputs[j].path))
        throw Error(out.option + " '" + out.path + "' and " + outputs[j].option + " '" + outputs[j].path +
                    "' are the same file");
  }
}

bool is_stream_target(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  if (S_ISDIR(st.st_mode)) throw Error("'" + path + "' is a directory, not a file to write");
  return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode);
}

void install_temp_file_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_files_and_reraise);
  });
}

AtomicPath::AtomicPath(std::string target) : target_(follow_links(target)) {
  struct stat st;
  if (stat(target_.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error("'" + target + "' is a directory, not a file to write");
    if (!S_ISREG(st.st_mode))
      throw Error("'" + target + "' is a device, FIFO or socket; this output must be a regular file");
  }
  static std::atomic<int> counter{0};
  install_temp_file_cleanup();
  temp_ = target_ + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  slot_ = register_temp(temp_);
}

AtomicPath::~AtomicPath() {
  if (!committed_) unlink(temp_.c_str());
  unregister_temp(slot_);
}

void AtomicPath::commit() {
  // The data must be on disk before the name says the file is complete.
  const int fd = open(temp_.c_str(), O_RDONLY);
  if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL)) {
    const std::string why = errno_text();
    if (fd >= 0) close(fd);
    throw Error("cannot sync '" + temp_ + "': " + why);
  }
  close(fd);
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

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdout;
  } else if (is_stream_target(path)) {
    file_ = std::fopen(path.c_str(), "wb");  // a device or FIFO: written in place
    if (!file_) throw Error("cannot open '" + path + "' for writing: " + errno_text());
  } else {
    atomic_ = std::make_unique<AtomicPath>(path);
    file_ = std::fopen(atomic_->temp().c_str(), "wb");
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
  if (file_ == stdout) return;
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw Error("cannot write '" + path_ + "': " + errno_text());
  if (atomic_) atomic_->commit();
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
