// Internal to lib/data: owned HDF5 handles and checked calls. Only the dataset reader, writer
// and merge include this header (and the dataset layout fuzzer, which writes HDF5 files of its
// own); nothing else in legalnet sees an HDF5 type.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

#include "data/dataset_format.h"
#include "util/error.h"

namespace legalnet::data {
struct DatasetProvenance;
// The root attributes that make a dataset self-describing (dataset_writer.cpp).
void write_dataset_attributes(hid_t file, const DatasetProvenance& provenance, uint64_t rows, uint64_t games,
                              const std::string& path);
}  // namespace legalnet::data

namespace legalnet::data::h5 {

// Sets HDF5 up for files from others, once: its own error printing off (every failure becomes
// one legalnet::Error instead), and no filter plugins loaded from disk, so that a dataset that
// names an unknown compression filter is refused instead of making HDF5 load a shared library.
void configure_library();

// An owned hid_t closed with the matching H5*close.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();
  // Gives up ownership, for a close whose status the caller checks.
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Checks an HDF5 id or status; throws "<file>: <what>: <HDF5's innermost message>".
hid_t check(hid_t id, const std::string& file, const std::string& what);
void check_status(herr_t status, const std::string& file, const std::string& what);

// Attributes on a file, group or dataset.
void write_string_attribute(hid_t object, const char* name, const std::string& value, const std::string& file);
void write_string_list_attribute(hid_t object, const char* name, const std::vector<std::string>& values,
                                 const std::string& file);
void write_int_attribute(hid_t object, const char* name, int64_t value, const std::string& file);
bool has_attribute(hid_t object, const char* name);
std::string read_string_attribute(hid_t object, const char* name, const std::string& file);
std::vector<std::string> read_string_list_attribute(hid_t object, const char* name, const std::string& file);
int64_t read_int_attribute(hid_t object, const char* name, const std::string& file);

// A column's element type: as HDF5's native type, whether a stored type is it, and its name.
hid_t native_type(Element element);
bool stored_as(hid_t type, Element element);
std::string element_name(Element element);
// A column's dimensions for `rows` rows.
std::vector<hsize_t> column_dims(const ColumnSpec& column, hsize_t rows);

// Creates `column` under `parent` as the writer and merge make every dataset of the format:
// its element type and tail from the table, chunks of chunk_rows rows (trailing dimensions
// whole), byte shuffle for elements wider than a byte, deflate at DEFLATE_LEVEL, and no
// timestamps (the same input gives a byte-identical file). rows == EXTENDIBLE: 0 rows, grown
// as rows come (H5Dset_extent).
constexpr hsize_t EXTENDIBLE = H5S_UNLIMITED;
Handle create_column(hid_t parent, const ColumnSpec& column, hsize_t rows, hsize_t chunk_rows,
                     const std::string& file);

// Selects rows [first, first + count) of a dataspace, every trailing dimension whole, and
// returns the selection's shape (the memory space to read or write it with).
std::vector<hsize_t> select_rows(hid_t space, hsize_t first, hsize_t count, const std::string& file,
                                 const std::string& what);

// The HDF5 native type matching a C++ integer type.
template <class T>
hid_t native_type();

}  // namespace legalnet::data::h5
