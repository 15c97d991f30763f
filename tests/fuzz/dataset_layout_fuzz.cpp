// libFuzzer target: the dataset reader on well-formed HDF5 files of every layout. The input bytes
// do not become the file; they choose how HDF5's own writer builds it: each attribute present or
// not, scalar or an array, of which type; each column present or not, of which element type,
// rank and dimensions, stored contiguous, chunked, compact, in an external file or as a virtual
// dataset, and its values. So every input passes HDF5's parser and exercises the reader's own
// checks (types and shapes before any read, sizes before any allocation) and then every accessor
// train, evaluate and merge use. Errors are legalnet::Error; anything else is a finding.
// (dataset_fuzz feeds raw bytes instead, which mostly exercises HDF5's parser.)
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "data/dataset_format.h"
#include "data/h5.h"
#include "dataset_reads.h"
#include "fuzz_input.h"
#include "util/error.h"

namespace {

using namespace legalnet;
using data::h5::Handle;

// True with probability p, and false once the input is used up: every choice defaults to what
// the writer does, so short inputs make valid datasets and mutations depart from them.
bool rarely(FuzzedDataProvider& in, float p) { return in.ConsumeProbability<float>() > 1.0f - p; }

// The element types a column or attribute may be stored as: the expected ones and wrong ones.
hid_t pick_type(FuzzedDataProvider& in, hid_t expected) {
  static const hid_t* types[] = {&H5T_NATIVE_INT8_g,  &H5T_NATIVE_UINT8_g,  &H5T_NATIVE_INT16_g, &H5T_NATIVE_INT32_g,
                                 &H5T_NATIVE_INT64_g, &H5T_NATIVE_UINT64_g, &H5T_NATIVE_FLOAT_g, &H5T_NATIVE_DOUBLE_g};
  if (!rarely(in, 0.2f)) return expected;
  return *types[in.ConsumeIntegralInRange<size_t>(0, std::size(types) - 1)];
}

// A dimension: mostly the expected one, sometimes another small one, rarely a huge claim.
hsize_t pick_dim(FuzzedDataProvider& in, hsize_t expected) {
  const int choice = in.ConsumeIntegralInRange(0, 9);
  if (choice < 7) return expected;
  if (choice < 9) return in.ConsumeIntegralInRange<hsize_t>(0, 70);
  return hsize_t(1) << in.ConsumeIntegralInRange(20, 45);
}

// Writes an attribute of the root: a string (variable or fixed length) or a number, scalar or
// an array of a few elements.
void write_attribute(FuzzedDataProvider& in, hid_t file, const char* name, bool is_string, int64_t value,
                     const std::string& text) {
  if (rarely(in, 0.05f)) return;  // absent
  const bool array = rarely(in, 0.1f);
  const hsize_t n = array ? in.ConsumeIntegralInRange<hsize_t>(0, 64) : 1;
  Handle space(array ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_SCALAR));
  if (is_string != rarely(in, 0.1f)) {
    const bool variable = !rarely(in, 0.5f);
    const std::string s = rarely(in, 0.2f) ? in.ConsumeRandomLengthString(80) : text;
    Handle type(H5Tcopy(H5T_C_S1));
    H5Tset_size(type, variable ? H5T_VARIABLE : std::max<size_t>(1, s.size()));
    if (!rarely(in, 0.2f)) H5Tset_cset(type, H5T_CSET_UTF8);  // as the writer and h5py store text
    Handle attr(H5Acreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
    if (attr < 0) return;
    if (variable) {
      std::vector<const char*> values(n, s.c_str());
      H5Awrite(attr, type, values.data());
    } else {
      std::string values;
      for (hsize_t i = 0; i < n; ++i) values += s.empty() ? std::string(1, '\0') : s;
      H5Awrite(attr, type, values.data());
    }
  } else {
    const hid_t type = pick_type(in, H5T_NATIVE_INT64);
    Handle attr(H5Acreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
    if (attr < 0) return;
    std::vector<int64_t> values(n, rarely(in, 0.2f) ? in.ConsumeIntegral<int64_t>() : value);
    H5Awrite(attr, H5T_NATIVE_INT64, values.data());
  }
}

// Creates one column in `parent` (the expected name, element type and tail, rows) in a layout
// the input picks, with values from the input.
void write_column(FuzzedDataProvider& in, hid_t parent, const data::ColumnSpec& spec, hsize_t rows,
                  const std::string& self_path) {
  if (rarely(in, 0.03f)) return;  // absent
  if (rarely(in, 0.02f)) {        // a group where a dataset belongs
    Handle group(H5Gcreate2(parent, spec.name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    return;
  }
  std::vector<hsize_t> dims{pick_dim(in, rows)};
  for (int i = 0; i < spec.tail_rank(); ++i) dims.push_back(pick_dim(in, hsize_t(spec.tail[i])));
  if (rarely(in, 0.05f)) dims.push_back(in.ConsumeIntegralInRange<hsize_t>(1, 3));
  if (rarely(in, 0.03f)) dims.pop_back();
  const int rank = int(dims.size());
  std::vector<hsize_t> max_dims = dims;
  const hid_t type = pick_type(in, data::h5::native_type(spec.element));

  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  const int layout = in.ConsumeIntegralInRange(0, 12);
  hsize_t elements = 1;
  for (hsize_t d : dims) elements *= d;
  const bool huge = elements > (hsize_t(1) << 22);
  if (layout <= 5 || huge) {  // chunked, as the writer does (the only layout a huge claim can take)
    if (rank == 0) return;
    std::vector<hsize_t> chunk(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) chunk[i] = std::max<hsize_t>(1, std::min<hsize_t>(dims[i], 64));
    max_dims[0] = H5S_UNLIMITED;
    H5Pset_chunk(dcpl, rank, chunk.data());
    if (in.ConsumeBool()) H5Pset_shuffle(dcpl);
    if (in.ConsumeBool()) H5Pset_deflate(dcpl, 1);
    if (rarely(in, 0.05f)) H5Pset_fletcher32(dcpl);
  } else if (layout <= 8) {
    // contiguous
  } else if (layout == 9) {
    H5Pset_layout(dcpl, H5D_COMPACT);
  } else if (layout == 10) {  // raw data in an external file: a file of the machine's, or the input itself
    const char* external = in.ConsumeBool() ? "/etc/hostname" : self_path.c_str();
    H5Pset_external(dcpl, external, 0, H5F_UNLIMITED);
  } else {  // a virtual dataset over a dataset of another file, or of this one
    Handle vspace(H5Screate_simple(rank, dims.data(), nullptr));
    Handle sspace(H5Screate_simple(rank, dims.data(), nullptr));
    const std::string source = in.ConsumeBool() ? "." : "/tmp/legalnet-no-such-shard.h5";
    H5Pset_virtual(dcpl, vspace, source.c_str(), in.ConsumeBool() ? spec.name : "positions", sspace);
  }
  Handle space(H5Screate_simple(rank, dims.data(), max_dims.data()));
  Handle ds(H5Dcreate2(parent, spec.name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  if (ds < 0 || huge || layout >= 10) return;
  // Values: mostly valid-looking small numbers, from the input.
  std::vector<int8_t> values(elements);
  const std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(std::min<size_t>(elements, in.remaining_bytes() / 2));
  for (size_t i = 0; i < bytes.size(); ++i) values[i] = int8_t(bytes[i]);
  H5Dwrite(ds, H5T_NATIVE_INT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
}

void write_file(FuzzedDataProvider& in, const std::string& path) {
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  if (file < 0) return;
  const hsize_t rows = in.ConsumeIntegralInRange<hsize_t>(0, 40);
  const hsize_t games = in.ConsumeIntegralInRange<hsize_t>(0, 6);
  write_attribute(in, file, "format", true, 0, data::FORMAT_NAME);
  write_attribute(in, file, "format_version", false, data::FORMAT_VERSION, "");
  write_attribute(in, file, "num_positions", false, int64_t(rows), "");
  write_attribute(in, file, "sources", true, 0, "games.pgn");
  write_attribute(in, file, "include_final", false, 0, "");
  write_attribute(in, file, "dedupe", false, 0, "");
  write_attribute(in, file, "tool_version", true, 0, "tensorize 0.3.0");
  for (const data::ColumnSpec& spec : data::ROW_COLUMNS) write_column(in, file, spec, rows, path);
  if (rarely(in, 0.03f)) return;
  Handle group(H5Gcreate2(file, data::GAMES_GROUP, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (const data::ColumnSpec& spec : data::GAME_COLUMNS) write_column(in, group, spec, games, path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // HDF5's error printing off (failed combinations are expected), as the readers have it; and
  // the library open, so that the H5T_NATIVE_* ids pick_type holds are set.
  data::h5::configure_library();
  H5open();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  static const std::string path = fuzz_input_path("dataset-layout", ".h5");
  FuzzedDataProvider in(bytes, size);
  write_file(in, path);
  try {
    read_dataset_everywhere(path);
  } catch (const Error& e) {
    static const bool verbose = std::getenv("LEGALNET_FUZZ_VERBOSE") != nullptr;  // to see which check refused
    if (verbose) std::fprintf(stderr, "%s\n", e.what());
  }
  return 0;
}
