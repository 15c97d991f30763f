// Checked HDF5 calls on files, groups, links, datasets and dataspaces (data/h5.h): the only
// HDF5 calls of the dataset reader, writer and merge.
#include <algorithm>

#include "data/h5.h"
#include "util/files.h"

namespace legalnet::data::h5 {

Handle create_file(const std::string& created_name, const std::string& file, const std::string& shown_name) {
  return Handle(check(H5Fcreate(created_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), file,
                      "cannot create '" + shown_name + "'"));
}

Handle open_file(const std::string& path) {
  complete_interrupted_commit(path);  // a killed run's renames onto it (and its other outputs), finished
  return Handle(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "cannot open"));
}

Handle try_open_file(const std::string& path) {
  complete_interrupted_commit(path);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file.valid()) H5Eclear2(H5E_DEFAULT);
  return file;
}

bool is_hdf5(const std::string& path) { return H5Fis_hdf5(path.c_str()) > 0; }

void close_file(Handle& file, const std::string& path) { check_status(H5Fclose(file.release()), path, "close"); }

Handle create_group(hid_t parent, const char* name, const std::string& file) {
  Handle gcpl(check(H5Pcreate(H5P_GROUP_CREATE), file, "group properties"));
  check_status(H5Pset_obj_track_times(gcpl, false), file, "group properties");
  return Handle(
      check(H5Gcreate2(parent, name, H5P_DEFAULT, gcpl, H5P_DEFAULT), file, std::string("create group ") + name));
}

Handle open_group(hid_t parent, const char* name, const std::string& file) {
  return Handle(check(H5Gopen2(parent, name, H5P_DEFAULT), file, std::string("open group ") + name));
}

bool has_link(hid_t parent, const char* name) { return H5Lexists(parent, name, H5P_DEFAULT) > 0; }

H5L_type_t link_type(hid_t parent, const char* name) {
  H5L_info_t info{};
  return H5Lget_info(parent, name, &info, H5P_DEFAULT) < 0 ? H5L_TYPE_ERROR : info.type;
}

Handle open_dataset(hid_t parent, const char* name, const std::string& file, const std::string& what) {
  return Handle(check(H5Dopen2(parent, name, H5P_DEFAULT), file, what));
}

Handle dataset_type(hid_t dataset, const std::string& file, const std::string& what) {
  return Handle(check(H5Dget_type(dataset), file, what));
}

Handle dataset_space(hid_t dataset, const std::string& file, const std::string& what) {
  return Handle(check(H5Dget_space(dataset), file, what));
}

Handle creation_properties(hid_t dataset, const std::string& file, const std::string& what) {
  return Handle(check(H5Dget_create_plist(dataset), file, what));
}

std::vector<hsize_t> dims(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> out(size_t(std::max(rank, 0)));
  if (rank > 0 && H5Sget_simple_extent_dims(space, out.data(), nullptr) < 0) out.clear();
  return out;
}

uint64_t points(hid_t space) {
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  return n < 0 ? 0 : uint64_t(n);
}

uint64_t storage_size(hid_t dataset) { return H5Dget_storage_size(dataset); }
H5D_layout_t layout(hid_t dcpl) { return H5Pget_layout(dcpl); }
int external_count(hid_t dcpl) { return H5Pget_external_count(dcpl); }

std::vector<H5Z_filter_t> filters(hid_t dcpl) {
  std::vector<H5Z_filter_t> out;
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0;
    size_t values = 0;
    out.push_back(H5Pget_filter2(dcpl, unsigned(i), &flags, &values, nullptr, 0, nullptr, nullptr));
  }
  return out;
}

size_t virtual_count(hid_t dcpl, const std::string& file, const std::string& what) {
  size_t count = 0;
  check_status(H5Pget_virtual_count(dcpl, &count), file, what);
  return count;
}

namespace {
// One of a virtual mapping's names (H5Pget_virtual_filename or _dsetname).
std::string virtual_name(ssize_t (*get)(hid_t, size_t, char*, size_t), hid_t dcpl, size_t i, const std::string& file,
                         const std::string& what) {
  const ssize_t length = get(dcpl, i, nullptr, 0);
  if (length < 0) throw Error(file + ": dataset '" + what + "': cannot read its virtual mapping");
  std::string value(size_t(length), '\0');
  get(dcpl, i, value.data(), value.size() + 1);
  return value;
}
}  // namespace

VirtualMapping virtual_mapping(hid_t dcpl, size_t i, const std::string& file, const std::string& what) {
  VirtualMapping m;
  m.file = virtual_name(H5Pget_virtual_filename, dcpl, i, file, what);
  m.dataset = virtual_name(H5Pget_virtual_dsetname, dcpl, i, file, what);
  m.vspace = Handle(check(H5Pget_virtual_vspace(dcpl, i), file, what));
  m.srcspace = Handle(check(H5Pget_virtual_srcspace(dcpl, i), file, what));
  return m;
}

bool selects_all(hid_t space) { return H5Sget_select_type(space) == H5S_SEL_ALL; }

bool selection(hid_t space, Selection& out) {
  out.dims = dims(space);
  const hssize_t n = H5Sget_select_npoints(space);
  if (out.dims.empty() || n <= 0) return false;
  out.points = uint64_t(n);
  out.start.assign(out.dims.size(), 0);
  out.end.assign(out.dims.size(), 0);
  return H5Sget_select_bounds(space, out.start.data(), out.end.data()) >= 0;
}

void read_rows(hid_t dataset, Element memory, hsize_t first, hsize_t count, void* out, const std::string& file,
               const std::string& name) {
  Handle file_space = dataset_space(dataset, file, name);
  const std::vector<hsize_t> extent = dims(file_space);
  const hsize_t rows = extent.empty() ? 0 : extent[0];
  if (first + count > rows)
    throw Error(file + ": rows " + std::to_string(first) + ".." + std::to_string(first + count) + " of '" + name +
                "' are past its end (" + std::to_string(rows) + " rows)");
  if (count == 0) return;
  const std::vector<hsize_t> counts = select_rows(file_space, first, count, file, name);
  // The memory space has the selection's own shape: a 1-D memory space against an N-D
  // selection makes HDF5 map element by element, 20x slower.
  Handle mem(check(H5Screate_simple(int(counts.size()), counts.data(), nullptr), file, name));
  check_status(H5Dread(dataset, native_type(memory), mem, file_space, H5P_DEFAULT, out), file, "read " + name);
}

void write_rows(hid_t dataset, Element memory, hsize_t first, hsize_t count, const void* data, const std::string& file,
                const std::string& name) {
  if (count == 0) return;
  Handle file_space = dataset_space(dataset, file, name);
  const std::vector<hsize_t> counts = select_rows(file_space, first, count, file, name);
  Handle mem(check(H5Screate_simple(int(counts.size()), counts.data(), nullptr), file, name));
  check_status(H5Dwrite(dataset, native_type(memory), mem, file_space, H5P_DEFAULT, data), file, "write " + name);
}

void set_rows(hid_t dataset, const ColumnSpec& column, hsize_t rows, const std::string& file) {
  check_status(H5Dset_extent(dataset, column_dims(column, rows).data()), file, column.name);
}

void write_chunk(hid_t dataset, hsize_t first, const std::vector<unsigned char>& bytes, const std::string& file,
                 const std::string& name) {
  const hsize_t offset[4] = {first, 0, 0, 0};
  check_status(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset, bytes.size(), bytes.data()), file,
               "write chunk of " + name);
}

Handle create_virtual_column(hid_t parent, const ColumnSpec& column, hsize_t rows,
                             const std::vector<VirtualBlock>& blocks, const std::string& file) {
  const std::vector<hsize_t> extent = column_dims(column, rows);
  Handle space(check(H5Screate_simple(int(extent.size()), extent.data(), nullptr), file, column.name));
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), file, column.name));
  check_status(H5Pset_obj_track_times(dcpl, false), file, column.name);
  for (const VirtualBlock& b : blocks) {
    if (b.rows == 0) continue;
    const std::vector<hsize_t> src_dims = select_rows(space, b.first, b.rows, file, column.name);
    Handle src_space(check(H5Screate_simple(int(src_dims.size()), src_dims.data(), nullptr), file, column.name));
    check_status(H5Pset_virtual(dcpl, space, b.source.c_str(), column.name, src_space), file,
                 std::string("map ") + column.name + " of " + b.shown);
  }
  check_status(H5Sselect_all(space), file, column.name);
  return Handle(
      check(H5Dcreate2(parent, column.name, native_type(column.element), space, H5P_DEFAULT, dcpl, H5P_DEFAULT), file,
            std::string("create virtual dataset ") + column.name));
}

}  // namespace legalnet::data::h5
