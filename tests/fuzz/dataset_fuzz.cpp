// libFuzzer target: the dataset reader on arbitrary bytes as an HDF5 file, then every accessor
// on what it accepts. Most mutations stop in HDF5's own parser (checksums, signatures), so this
// target mostly tests the HDF5 library the build links; dataset_layout_fuzz builds well-formed
// files of every layout to test the reader's own checks. Errors are legalnet::Error; anything
// else escaping, a signal or a hang is a finding (tests/fuzz/run.sh sorts those found inside
// libhdf5 from ours).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "dataset_reads.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/legalnet-dataset-fuzz-" + std::to_string(getpid()) + ".h5";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    read_dataset_everywhere(path);
  } catch (const legalnet::Error&) {
  }
  return 0;
}
