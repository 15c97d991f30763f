// The fuzz targets whose readers take a path: the input goes to a file of this process's own,
// rewritten each run (no two fuzzers or jobs share one). It lives in $TMPDIR (tests/fuzz/run.sh
// points it at a folder it removes at the end: processes that crash in fork mode leave theirs).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// "$TMPDIR/legalnet-NAME-fuzz-PID" + extension ($TMPDIR unset or empty: /tmp).
inline std::string fuzz_input_path(const char* name, const char* extension) {
  const char* folder = std::getenv("TMPDIR");
  return std::string(folder && *folder ? folder : "/tmp") + "/legalnet-" + name + "-fuzz-" + std::to_string(getpid()) +
         extension;
}

// Writes the input to `path`; false if the file cannot be created (the run is then skipped).
inline bool write_fuzz_input(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  return true;
}
