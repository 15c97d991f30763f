#include "data/h5.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace legalnet::data::h5 {
namespace {

// The innermost message of the current HDF5 error stack ("file signature not found").
herr_t keep_message(unsigned, const H5E_error2_t* error, void* out) {
  if (error->desc) *static_cast<std::string*>(out) = error->desc;
  return 0;
}

// HDF5's innermost message, in the user's words: a failed system call's own text ("No space
// left on device") rather than the driver's dump of descriptors, buffers and byte counts.
std::string hdf5_message() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_message, &message);
  H5Eclear2(H5E_DEFAULT);
  const std::string marker = "error message = '";
  if (const size_t at = message.find(marker); at != std::string::npos) {
    const size_t start = at + marker.size(), end = message.find('\'', start);
    message = message.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  message = message.substr(0, message.find('\n'));
  return message.empty() ? "HDF5 error" : message;
}

}  // namespace

void configure_library() {
  static std::once_flag once;
  std::call_once(once, [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    H5PLset_loading_state(0);
  });
}

void Handle::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
  id_ = H5I_INVALID_HID;
}

hid_t check(hid_t id, const std::string& file, const std::string& what) {
  if (id < 0) throw Error(file + ": " + what + ": " + hdf5_message());
  return id;
}

void check_status(herr_t status, const std::string& file, const std::string& what) {
  if (status < 0) throw Error(file + ": " + what + ": " + hdf5_message());
}

namespace {

Handle utf8_string_type(const std::string& file) {
  Handle type(check(H5Tcopy(H5T_C_S1), file, "string type"));
  check_status(H5Tset_size(type, H5T_VARIABLE), file, "string type");
  check_status(H5Tset_cset(type, H5T_CSET_UTF8), file, "string type");
  return type;
}

void write_attribute(hid_t object, const char* name, hid_t type, hid_t space, const void* data,
                     const std::string& file) {
  if (H5Aexists(object, name) > 0) check_status(H5Adelete(object, name), file, std::string("attribute ") + name);
  Handle attr(check(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), file,
                    std::string("create attribute ") + name));
  check_status(H5Awrite(attr, type, data), file, std::string("write attribute ") + name);
}

Handle open_attribute(hid_t object, const char* name, const std::string& file) {
  if (H5Aexists(object, name) <= 0) throw Error(file + ": attribute '" + name + "' is missing");
  return Handle(check(H5Aopen(object, name, H5P_DEFAULT), file, std::string("open attribute ") + name));
}

}  // namespace

void write_string_attribute(hid_t object, const char* name, const std::string& value, const std::string& file) {
  Handle type = utf8_string_type(file);
  Handle space(check(H5Screate(H5S_SCALAR), file, "dataspace"));
  const char* p = value.c_str();
  write_attribute(object, name, type, space, &p, file);
}

void write_string_list_attribute(hid_t object, const char* name, const std::vector<std::string>& values,
                                 const std::string& file) {
  Handle type = utf8_string_type(file);
  const hsize_t n = values.size();
  Handle space(check(H5Screate_simple(1, &n, nullptr), file, "dataspace"));
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  write_attribute(object, name, type, space, ptrs.data(), file);
}

void write_int_attribute(hid_t object, const char* name, int64_t value, const std::string& file) {
  Handle space(check(H5Screate(H5S_SCALAR), file, "dataspace"));
  write_attribute(object, name, H5T_NATIVE_INT64, space, &value, file);
}

bool has_attribute(hid_t object, const char* name) { return H5Aexists(object, name) > 0; }

namespace {

// The most values and bytes an attribute may hold: far above what the writer stores (one
// "sources" entry per input file), far below what would exhaust memory.
constexpr hssize_t MAX_ATTRIBUTE_VALUES = 1 << 20;
constexpr size_t MAX_ATTRIBUTE_BYTES = size_t(64) << 20;

// The number of values an attribute holds, checked before any read: H5Aread writes as many
// values as the file's dataspace says, whatever buffer it is given, so a scalar stored as an
// array would overrun the caller's variable. `single` asks for a scalar or a one-value array.
hsize_t checked_values(hid_t attr, const char* name, bool single, const std::string& file) {
  Handle space(check(H5Aget_space(attr), file, std::string("attribute ") + name));
  const H5S_class_t kind = H5Sget_simple_extent_type(space);
  const int rank = H5Sget_simple_extent_ndims(space);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  const std::string what = file + ": attribute '" + name + "' ";
  if (kind == H5S_SCALAR) return 1;
  if (kind != H5S_SIMPLE || rank < 0 || n < 0) throw Error(what + "has no value (an empty dataspace)");
  if (single) {
    if (rank != 1 || n != 1)
      throw Error(what + "is not a single value (it holds " + std::to_string(n) + " in " + std::to_string(rank) +
                  " dimensions)");
    return 1;
  }
  if (rank != 1) throw Error(what + "is not a list (it has " + std::to_string(rank) + " dimensions)");
  if (n > MAX_ATTRIBUTE_VALUES)
    throw Error(what + "holds " + std::to_string(n) + " values, more than " + std::to_string(MAX_ATTRIBUTE_VALUES));
  return hsize_t(n);
}

}  // namespace

std::string read_string_attribute(hid_t object, const char* name, const std::string& file) {
  const auto list = read_string_list_attribute(object, name, file);
  if (list.size() != 1) throw Error(file + ": attribute '" + name + "' is not a single string");
  return list[0];
}

std::vector<std::string> read_string_list_attribute(hid_t object, const char* name, const std::string& file) {
  Handle attr = open_attribute(object, name, file);
  Handle stored(check(H5Aget_type(attr), file, std::string("attribute ") + name));
  if (H5Tget_class(stored) != H5T_STRING) throw Error(file + ": attribute '" + name + "' is not a string");
  const hsize_t n = checked_values(attr, name, false, file);
  std::vector<std::string> values;
  if (H5Tis_variable_str(stored) > 0) {
    Handle type = utf8_string_type(file);
    Handle space(check(H5Aget_space(attr), file, std::string("attribute ") + name));
    std::vector<char*> ptrs(size_t(n), nullptr);
    check_status(H5Aread(attr, type, ptrs.data()), file, std::string("read attribute ") + name);
    size_t bytes = 0;
    for (char* p : ptrs) {
      values.emplace_back(p ? p : "");
      bytes += values.back().size();
    }
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, ptrs.data());
    if (bytes > MAX_ATTRIBUTE_BYTES)
      throw Error(file + ": attribute '" + name + "' holds " + std::to_string(bytes) + " bytes, more than " +
                  std::to_string(MAX_ATTRIBUTE_BYTES));
  } else {  // fixed-length strings, as some writers (h5py with numpy bytes) make them
    const size_t size = H5Tget_size(stored);
    if (size == 0 || size > MAX_ATTRIBUTE_BYTES / std::max<size_t>(n, 1))
      throw Error(file + ": attribute '" + name + "' has strings of " + std::to_string(size) + " bytes, " +
                  std::to_string(n) + " of them: more than " + std::to_string(MAX_ATTRIBUTE_BYTES) + " bytes");
    std::vector<char> buffer(size * size_t(n) + 1, '\0');
    check_status(H5Aread(attr, stored, buffer.data()), file, std::string("read attribute ") + name);
    for (hsize_t i = 0; i < n; ++i)
      values.emplace_back(buffer.data() + size_t(i) * size, strnlen(buffer.data() + size_t(i) * size, size));
  }
  return values;
}

int64_t read_int_attribute(hid_t object, const char* name, const std::string& file) {
  Handle attr = open_attribute(object, name, file);
  Handle stored(check(H5Aget_type(attr), file, std::string("attribute ") + name));
  if (H5Tget_class(stored) != H5T_INTEGER) throw Error(file + ": attribute '" + name + "' is not an integer");
  checked_values(attr, name, true, file);
  int64_t value = 0;
  check_status(H5Aread(attr, H5T_NATIVE_INT64, &value), file, std::string("read attribute ") + name);
  return value;
}

hid_t native_type(Element element) {
  switch (element) {
    case Element::INT8: return H5T_NATIVE_INT8;
    case Element::UINT8: return H5T_NATIVE_UINT8;
    case Element::INT16: return H5T_NATIVE_INT16;
    case Element::INT32: return H5T_NATIVE_INT32;
    case Element::INT64: return H5T_NATIVE_INT64;
  }
  return H5T_NATIVE_INT64;
}

bool stored_as(hid_t type, Element element) {
  return H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == size_t(traits(element).bytes) &&
         (H5Tget_sign(type) != H5T_SGN_NONE) == traits(element).is_signed;
}

std::vector<hsize_t> column_dims(const ColumnSpec& column, hsize_t rows) {
  std::vector<hsize_t> dims{rows};
  for (int i = 0; i < column.tail_rank(); ++i) dims.push_back(hsize_t(column.tail[size_t(i)]));
  return dims;
}

Handle create_column(hid_t parent, const ColumnSpec& column, hsize_t rows, hsize_t chunk_rows,
                     const std::string& file) {
  const bool extendible = rows == EXTENDIBLE;
  const std::vector<hsize_t> dims = column_dims(column, extendible ? 0 : rows);
  std::vector<hsize_t> max = dims;
  if (extendible) max[0] = H5S_UNLIMITED;
  Handle space(check(H5Screate_simple(int(dims.size()), dims.data(), max.data()), file, column.name));
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), file, column.name));
  // HDF5 cannot chunk an empty fixed-size dataset; an extendible one must be chunked.
  if (extendible || rows > 0) {
    std::vector<hsize_t> chunk = column_dims(column, extendible ? chunk_rows : std::min(rows, chunk_rows));
    check_status(H5Pset_chunk(dcpl, int(chunk.size()), chunk.data()), file, column.name);
    if (traits(column.element).bytes > 1) check_status(H5Pset_shuffle(dcpl), file, column.name);
    check_status(H5Pset_deflate(dcpl, DEFLATE_LEVEL), file, column.name);
  }
  check_status(H5Pset_obj_track_times(dcpl, false), file, column.name);
  Handle dataset(
      check(H5Dcreate2(parent, column.name, native_type(column.element), space, H5P_DEFAULT, dcpl, H5P_DEFAULT), file,
            std::string("create dataset ") + column.name));
  // What the column holds, for a reader who opens the file in h5py or HDFView.
  write_string_attribute(dataset, "description", column.description, file);
  return dataset;
}

std::vector<hsize_t> select_rows(hid_t space, hsize_t first, hsize_t count, const std::string& file,
                                 const std::string& what) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 1) throw Error(file + ": " + what + ": not an array");
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), offset(static_cast<size_t>(rank), 0);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  offset[0] = first;
  dims[0] = count;
  check_status(H5Sselect_hyperslab(space, H5S_SELECT_SET, offset.data(), nullptr, dims.data(), nullptr), file, what);
  return dims;
}

}  // namespace legalnet::data::h5
