// libFuzzer target: the dataset reader on arbitrary bytes as an HDF5 file, then every accessor
// on what it accepts. Most mutations stop in HDF5's own parser (checksums, signatures), so this
// target mostly tests the HDF5 library the build links; dataset_layout_fuzz builds well-formed
// files of every layout to test the reader's own checks. Errors are legalnet::Error; anything
// else escaping, a signal or a hang is a finding (tests/fuzz/run.sh sorts those found inside
// libhdf5 from ours).
#include <string>

#include "dataset_reads.h"
#include "fuzz_input.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = fuzz_input_path("dataset", ".h5");
  if (!write_fuzz_input(path, data, size)) return 0;
  try {
    read_dataset_everywhere(path);
  } catch (const legalnet::Error&) {
  }
  return 0;
}
