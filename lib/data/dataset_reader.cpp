#include "data/dataset_reader.h"

#include <filesystem>
#include <map>

#include "data/dataset_format.h"
#include "data/h5.h"
#include "encode/encode.h"

namespace legalnet::data {
namespace {

const ColumnSpec& column_spec(const std::string& name) {
  for (const ColumnSpec& c : ROW_COLUMNS)
    if (name == c.name) return c;
  for (const ColumnSpec& c : GAME_COLUMNS)
    if (name == c.name) return c;
  throw Error("no column '" + name + "' in the dataset format");
}

}  // namespace

struct DatasetReader::Impl {
  std::string path;
  h5::Handle file;
  std::map<std::string, h5::Handle> datasets;  // by path inside the file
  uint64_t positions = 0, games = 0;

  // Opens a dataset and checks type and shape; returns its first dimension.
  hsize_t open_checked(hid_t parent, const std::string& prefix, const ColumnSpec& e) {
    const std::string where = prefix + e.name;
    if (H5Lexists(parent, e.name, H5P_DEFAULT) <= 0) throw Error(path + ": dataset '" + where + "' is missing");
    h5::Handle ds(h5::check(H5Dopen2(parent, e.name, H5P_DEFAULT), path, "open dataset " + where));
    h5::Handle type(h5::check(H5Dget_type(ds), path, where));
    if (!h5::stored_as(type, e.element))
      throw Error(path + ": dataset '" + where + "' has the wrong type (expected " + h5::element_name(e.element) + ")");
    h5::Handle space(h5::check(H5Dget_space(ds), path, where));
    const int rank = H5Sget_simple_extent_ndims(space);
    std::vector<hsize_t> dims(size_t(std::max(rank, 0)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    if (dims.size() != size_t(e.tail_rank()) + 1 || !std::equal(dims.begin() + 1, dims.end(), e.tail.begin())) {
      std::string expected = "(N";
      for (int i = 0; i < e.tail_rank(); ++i) expected += ", " + std::to_string(e.tail[size_t(i)]);
      throw Error(path + ": dataset '" + where + "' has the wrong shape (expected " + expected + "))");
    }
    datasets[where] = std::move(ds);
    return dims[0];
  }

  // A virtual dataset (made by merge) reads missing or shorter sources as zeros without a
  // word: check that each source exists and still has the rows it is mapped to.
  void check_virtual_sources(const char* name) {
    h5::Handle dcpl(h5::check(H5Dget_create_plist(dataset(name)), path, name));
    if (H5Pget_layout(dcpl) != H5D_VIRTUAL) return;
    size_t count = 0;
    h5::check_status(H5Pget_virtual_count(dcpl, &count), path, name);
    const auto dir = std::filesystem::absolute(path).parent_path();
    for (size_t i = 0; i < count; ++i) {
      const ssize_t length = H5Pget_virtual_filename(dcpl, i, nullptr, 0);
      std::string source(size_t(std::max<ssize_t>(length, 0)), '\0');
      H5Pget_virtual_filename(dcpl, i, source.data(), source.size() + 1);
      const std::filesystem::path resolved =
          std::filesystem::path(source).is_absolute() ? std::filesystem::path(source) : dir / source;
      if (!std::filesystem::exists(resolved))
        throw Error(path + ": dataset '" + name + "' is joined from '" + source + "', which is missing");
      h5::Handle mapped(h5::check(H5Pget_virtual_vspace(dcpl, i), path, name));
      const auto rows_mapped = uint64_t(H5Sget_select_npoints(mapped)) / row_elements(name);
      h5::Handle src(H5Fopen(resolved.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
      if (!src.valid() || !h5::has_attribute(src, "num_positions") ||
          uint64_t(h5::read_int_attribute(src, "num_positions", source)) != rows_mapped)
        throw Error(path + ": dataset '" + name + "' is joined from '" + source +
                    "', which no longer holds the rows it was joined with (re-run merge)");
    }
  }

  static uint64_t row_elements(const std::string& name) { return uint64_t(column_spec(name).elements_per_row()); }

  hid_t dataset(const std::string& name) const {
    auto it = datasets.find(name);
    if (it == datasets.end()) throw Error(path + ": no dataset '" + name + "'");
    return it->second;
  }

  void read_slab(const std::string& name, hid_t mem_type, uint64_t start, uint64_t count, void* out) const {
    const hid_t ds = dataset(name);
    h5::Handle file_space(h5::check(H5Dget_space(ds), path, name));
    hsize_t rows = 0;
    if (H5Sget_simple_extent_ndims(file_space) >= 1) {
      std::vector<hsize_t> dims(size_t(H5Sget_simple_extent_ndims(file_space)));
      H5Sget_simple_extent_dims(file_space, dims.data(), nullptr);
      rows = dims[0];
    }
    if (start + count > rows)
      throw Error(path + ": rows " + std::to_string(start) + ".." + std::to_string(start + count) + " of '" + name +
                  "' are past its end (" + std::to_string(rows) + " rows)");
    if (count == 0) return;
    const std::vector<hsize_t> counts = h5::select_rows(file_space, start, count, path, name);
    // The memory space has the selection's own shape: a 1-D memory space against an N-D
    // selection makes HDF5 map element by element, 20x slower.
    h5::Handle mem_space(h5::check(H5Screate_simple(int(counts.size()), counts.data(), nullptr), path, name));
    h5::check_status(H5Dread(ds, mem_type, mem_space, file_space, H5P_DEFAULT, out), path, "read " + name);
  }
};

DatasetReader::DatasetReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  Impl& d = *impl_;
  d.path = path;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw Error(path + ": cannot open: no such file or not readable");
    std::fclose(f);
    throw Error(path + ": not an HDF5 file (or truncated)");
  }
  d.file = h5::Handle(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "cannot open"));
  if (!h5::has_attribute(d.file, "format")) throw Error(path + ": not a legalnet dataset (no 'format' attribute)");
  const std::string format = h5::read_string_attribute(d.file, "format", path);
  if (format != FORMAT_NAME) throw Error(path + ": format '" + format + "' is not '" + FORMAT_NAME + "'");
  const int64_t version = h5::read_int_attribute(d.file, "format_version", path);
  if (version != FORMAT_VERSION)
    throw Error(path + ": format version " + std::to_string(version) + " is not supported (this build reads version " +
                std::to_string(FORMAT_VERSION) + ")");

  for (const auto& e : ROW_COLUMNS) {
    const hsize_t n = d.open_checked(d.file, "", e);
    if (e.name == ROW_COLUMNS[0].name) d.positions = n;
    if (n != d.positions)
      throw Error(path + ": dataset '" + e.name + "' has " + std::to_string(n) + " rows, 'positions' has " +
                  std::to_string(d.positions));
  }
  if (H5Lexists(d.file, GAMES_GROUP, H5P_DEFAULT) <= 0) throw Error(path + ": group 'games' is missing");
  h5::Handle group(h5::check(H5Gopen2(d.file, GAMES_GROUP, H5P_DEFAULT), path, "open group games"));
  const std::string prefix = std::string(GAMES_GROUP) + "/";
  for (const auto& e : GAME_COLUMNS) {
    const hsize_t n = d.open_checked(group, prefix, e);
    if (e.name == GAME_COLUMNS[0].name) d.games = n;
    if (n != d.games) throw Error(path + ": dataset '" + prefix + e.name + "' has a different number of games");
  }
  d.check_virtual_sources(POSITIONS);
  d.check_virtual_sources(LEGAL_MOVES);
  if (uint64_t(h5::read_int_attribute(d.file, "num_positions", path)) != d.positions)
    throw Error(path + ": attribute num_positions does not match the datasets (incomplete file?)");
}

DatasetReader::~DatasetReader() = default;
DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;

const std::string& DatasetReader::path() const { return impl_->path; }
uint64_t DatasetReader::num_positions() const { return impl_->positions; }
uint64_t DatasetReader::num_games() const { return impl_->games; }

void DatasetReader::read_positions(uint64_t start, uint64_t count, int8_t* out) const {
  impl_->read_slab(POSITIONS, H5T_NATIVE_INT8, start, count, out);
}

void DatasetReader::read_legal_moves(uint64_t start, uint64_t count, uint8_t* out) const {
  impl_->read_slab(LEGAL_MOVES, H5T_NATIVE_UINT8, start, count, out);
}

std::vector<int64_t> DatasetReader::read_row_column(const char* name, uint64_t start, uint64_t count) const {
  std::vector<int64_t> values(count);
  impl_->read_slab(name, H5T_NATIVE_INT64, start, count, values.data());
  return values;
}

std::vector<chess::Position> DatasetReader::read_board_positions(uint64_t start, uint64_t count) const {
  std::vector<int8_t> planes(count * encode::POSITION_SIZE);
  read_positions(start, count, planes.data());
  const auto castling = read_row_column(CASTLING, start, count);
  const auto ep = read_row_column(EN_PASSANT, start, count);
  const auto half = read_row_column(HALFMOVE_CLOCK, start, count);
  const auto full = read_row_column(FULLMOVE_NUMBER, start, count);
  std::vector<chess::Position> positions;
  positions.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    try {
      positions.push_back(encode::decode_position(&planes[i * encode::POSITION_SIZE], uint8_t(castling[i]), int(ep[i]),
                                                  int(half[i]), int(full[i])));
    } catch (const Error& e) {
      throw Error(impl_->path + ": row " + std::to_string(start + i) + " is not a valid position: " + e.what());
    }
  }
  return positions;
}

std::vector<int64_t> DatasetReader::read_game_column(const char* name) const {
  std::vector<int64_t> values(impl_->games);
  impl_->read_slab(std::string(GAMES_GROUP) + "/" + name, H5T_NATIVE_INT64, 0, impl_->games, values.data());
  return values;
}

std::string DatasetReader::string_attribute(const char* name) const {
  return h5::read_string_attribute(impl_->file, name, impl_->path);
}
std::vector<std::string> DatasetReader::string_list_attribute(const char* name) const {
  return h5::read_string_list_attribute(impl_->file, name, impl_->path);
}
int64_t DatasetReader::int_attribute(const char* name) const {
  return h5::read_int_attribute(impl_->file, name, impl_->path);
}

}  // namespace legalnet::data
