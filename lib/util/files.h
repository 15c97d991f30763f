// Files that are never seen half-written, and streams that (de)compress gzip and zstd.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace legalnet {

// A temporary path next to `target` (target + ".tmp.<pid>.<n>"), renamed onto the target by
// commit() and removed by the destructor, or by SIGINT/SIGTERM/SIGHUP, if not committed.
// An interrupted or failed run therefore never leaves a file under the target's name.
// A symbolic link is written through (the file it names is replaced, the link stays); a
// directory, device, FIFO or socket at the target is refused before anything is written.
class AtomicPath {
 public:
  explicit AtomicPath(std::string target);
  ~AtomicPath();
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;

  const std::string& temp() const { return temp_; }
  const std::string& target() const { return target_; }
  // Renames the temporary onto the target; throws legalnet::Error on failure.
  void commit();

 private:
  std::string target_;
  std::string temp_;
  int slot_ = -1;  // entry in the signal handler's list of paths to remove
  bool committed_ = false;
};

// An output as a tool's option names it, or an input it reads.
struct NamedPath {
  std::string option;  // "--out", "--in", ...
  std::string path;    // "-" (stdin/stdout) is never compared
};

// Refuses, before any work, an output that is also an input of the same run (the same file,
// by device and inode, or the same path once resolved) or two outputs that are one file.
void check_outputs_are_not_inputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Whether an output path names a device, FIFO or socket: such targets are written in place
// (there is nothing to rename onto them). Throws legalnet::Error for a directory.
bool is_stream_target(const std::string& path);

enum class Compression { NONE, GZIP, ZSTD };
// Compression chosen by a file name's extension: .gz or .zst.
Compression compression_for(std::string_view path);

// A buffered output file written through AtomicPath and compressed by its extension;
// "-" is stdout, and a device or FIFO is written directly. Every write error names the file
// and the reason.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  void write(std::string_view data);
  // Completes compression, flushes, syncs and renames onto the target.
  void commit();
  const std::string& path() const { return path_; }

 private:
  struct Encoder;
  void write_raw(const void* data, size_t size);
  std::string path_;
  std::unique_ptr<AtomicPath> atomic_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Encoder> encoder_;
};

// Reads a plain, gzip or zstd file (detected from its first bytes, not its name); "-" is stdin.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
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

// Removes every registered temporary file, then restores the default action and re-raises;
// installed once by the first AtomicPath.
void install_temp_file_cleanup();

}  // namespace legalnet
