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

// A column's element type as HDF5's native type, and whether a stored type is it.
hid_t native_type(Element element);
bool stored_as(hid_t type, Element element);
inline std::string element_name(Element element) { return traits(element).name; }
// The HDF5 native type matching a C++ integer type.
template <class T>
hid_t native_type() {
  return native_type(element_of<T>());
}
// A column's dimensions for `rows` rows.
std::vector<hsize_t> column_dims(const ColumnSpec& column, hsize_t rows);

// Creates `column` under `parent` as the writer and merge make every dataset of the format:
// its element type and tail from the table, chunks of chunk_rows rows (trailing dimensions
// whole), byte shuffle for elements wider than a byte, deflate at DEFLATE_LEVEL, and no
// timestamps (the same input gives a byte-identical file). rows == EXTENDIBLE: 0 rows, grown
// as rows come (set_rows).
constexpr hsize_t EXTENDIBLE = H5S_UNLIMITED;
Handle create_column(hid_t parent, const ColumnSpec& column, hsize_t rows, hsize_t chunk_rows, const std::string& file);

// Selects rows [first, first + count) of a dataspace, every trailing dimension whole, and
// returns the selection's shape (the memory space to read or write it with).
std::vector<hsize_t> select_rows(hid_t space, hsize_t first, hsize_t count, const std::string& file,
                                 const std::string& what);

// Files and groups (h5_objects.cpp). Every call is checked; an error names `file` and what
// was being done.
// Creates the file at created_name (AtomicPath::created_name: a new file, never through a
// link), with the default or the given creation properties.
Handle create_file(const std::string& created_name, const std::string& file, const std::string& shown_name);
// Opens a file read-only; throws "<file>: cannot open: ...". try_open_file: invalid when not.
Handle open_file(const std::string& path);
Handle try_open_file(const std::string& path);
// Whether `path` is an HDF5 file (false for anything HDF5 cannot tell to be one).
bool is_hdf5(const std::string& path);
// Closes a file, checked: closing writes its metadata, and a full disk fails here.
void close_file(Handle& file, const std::string& path);
// A group without timestamps, as the writer and merge make "games".
Handle create_group(hid_t parent, const char* name, const std::string& file);
Handle open_group(hid_t parent, const char* name, const std::string& file);
// Whether parent has a link `name`, and its type (hard, soft, external; H5L_TYPE_ERROR when
// it cannot be read).
bool has_link(hid_t parent, const char* name);
H5L_type_t link_type(hid_t parent, const char* name);

// Datasets: opening, their type, space and creation properties.
Handle open_dataset(hid_t parent, const char* name, const std::string& file, const std::string& what);
Handle dataset_type(hid_t dataset, const std::string& file, const std::string& what);
Handle dataset_space(hid_t dataset, const std::string& file, const std::string& what);
Handle creation_properties(hid_t dataset, const std::string& file, const std::string& what);
// The dimensions of a simple dataspace (empty when it has none), and its number of elements.
std::vector<hsize_t> dims(hid_t space);
uint64_t points(hid_t space);
// The bytes a dataset stores in the file (compressed), and its layout, external files and
// filters as its creation properties give them.
uint64_t storage_size(hid_t dataset);
H5D_layout_t layout(hid_t dcpl);
int external_count(hid_t dcpl);
std::vector<H5Z_filter_t> filters(hid_t dcpl);

// A virtual dataset's mappings: how many, and each one's source file and dataset names and
// its selections in the virtual dataset and in the source.
struct VirtualMapping {
  std::string file, dataset;
  Handle vspace, srcspace;
};
size_t virtual_count(hid_t dcpl, const std::string& file, const std::string& what);
VirtualMapping virtual_mapping(hid_t dcpl, size_t i, const std::string& file, const std::string& what);
// The bounding box of a dataspace's selection and the points it selects; false when HDF5
// cannot tell (no selection). selects_all: the selection is H5S_SEL_ALL (the whole extent,
// which a virtual mapping stores without the extent).
struct Selection {
  std::vector<hsize_t> start, end, dims;
  uint64_t points = 0;
};
bool selection(hid_t space, Selection& out);
bool selects_all(hid_t space);

// Rows of a dataset. read_rows and write_rows move `count` rows from row `first`, in memory
// as `memory` elements (HDF5 converts to the stored type); read_rows refuses rows past the end.
void read_rows(hid_t dataset, Element memory, hsize_t first, hsize_t count, void* out, const std::string& file,
               const std::string& name);
void write_rows(hid_t dataset, Element memory, hsize_t first, hsize_t count, const void* data, const std::string& file,
                const std::string& name);
// Sets an extendible dataset's row count (its tail from the column).
void set_rows(hid_t dataset, const ColumnSpec& column, hsize_t rows, const std::string& file);
// Writes one chunk's compressed bytes, the chunk that starts at row `first`.
void write_chunk(hid_t dataset, hsize_t first, const std::vector<unsigned char>& bytes, const std::string& file,
                 const std::string& name);
// A virtual dataset of `column` with `rows` rows, made of (source file, first row, rows)
// blocks, each all rows of the source's dataset of the same name; no timestamps.
struct VirtualBlock {
  std::string source, shown;  // as the mapping stores it (relative), as the user gave it
  hsize_t first, rows;
};
Handle create_virtual_column(hid_t parent, const ColumnSpec& column, hsize_t rows,
                             const std::vector<VirtualBlock>& blocks, const std::string& file);

}  // namespace legalnet::data::h5
