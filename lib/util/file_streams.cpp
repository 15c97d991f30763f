// The compressed streams of util/files.h: OutputFile (written through AtomicPath) and
// InputFile, gzip and zstd through zlib's and libzstd's streaming APIs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "util/error.h"
#include "util/files.h"
#include "util/text.h"

namespace legalnet {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace
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

InputFile::InputFile(const std::string& path, InputKind kind) : path_(path) {
  if (path != "-") complete_interrupted_commit(path);  // a killed run's renames onto it, finished
  if (path == "-") {
    file_ = stdin;
  } else if (kind == InputKind::REGULAR) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw Error("cannot open '" + path + "': " + errno_text());
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error("'" + path + "' is " +
                  (S_ISDIR(st.st_mode)    ? "a directory"
                   : S_ISFIFO(st.st_mode) ? "a FIFO"
                                          : "not a regular file") +
                  ": this list is read whole before the work, from a file");
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file_ = fdopen(fd, "rb");
    if (!file_) {
      ::close(fd);
      throw Error("cannot open '" + path + "': " + errno_text());
    }
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
