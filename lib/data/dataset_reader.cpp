#include "data/dataset_reader.h"

#include <atomic>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "data/dataset_format.h"
#include "data/h5.h"
#include "data/row_block.h"
#include "encode/encode.h"
#include "util/text.h"

namespace legalnet::data {
namespace {

// Deflate's largest ratio: no stream inflates more than 1032 bytes per byte stored.
constexpr uint64_t MAX_DEFLATE_RATIO = 1032;

// The sizes a file claims, against what it stores. A dataset of 2^40 rows costs a few bytes of
// header when its chunks are never written (HDF5 reads them as zeros), and a filter such as
// scale-offset stores a constant chunk of any size in a few bytes: readers would allocate
// what the header claims. Only gzip and shuffle are taken (what tensorize and h5py write), so
// the values a dataset holds are at most 1032 times the bytes it stores, and those bytes lie
// within the file.
void check_stored_size(hid_t ds, hid_t dcpl, uint64_t raw_bytes, const std::string& file, const std::string& where) {
  const std::string at = file + ": dataset '" + where + "' ";
  bool deflated = false;
  for (const H5Z_filter_t id : h5::filters(dcpl)) {
    if (id == H5Z_FILTER_DEFLATE)
      deflated = true;
    else if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32)
      throw Error(at + "is stored through HDF5 filter " + std::to_string(int(id)) +
                  ", which this reader does not take (gzip and shuffle only)");
  }
  const uint64_t stored = h5::storage_size(ds);
  struct stat st {};
  const uint64_t file_bytes = ::stat(file.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
  const uint64_t most = deflated ? stored * MAX_DEFLATE_RATIO : stored;
  if (stored > file_bytes || (raw_bytes > most && stored < raw_bytes))
    throw Error(at + "claims " + std::to_string(raw_bytes) + " bytes of values but stores " + std::to_string(stored) +
                (deflated ? " compressed" : "") + " bytes in a file of " + std::to_string(file_bytes) +
                " (a forged or truncated file)");
}

// Only a hard link, to an object of this file: HDF5 would follow a soft link to another name
// and an external link into another file (any file on the machine, or a FIFO that never ends).
void check_hard_link(hid_t parent, const char* name, const std::string& file, const std::string& what) {
  const H5L_type_t type = h5::link_type(parent, name);
  if (type == H5L_TYPE_ERROR) throw Error(file + ": " + what + " cannot be read");
  if (type == H5L_TYPE_HARD) return;
  throw Error(file + ": " + what + " is " +
              (type == H5L_TYPE_EXTERNAL ? std::string("an external link (into another file)")
               : type == H5L_TYPE_SOFT   ? std::string("a soft link (to another name)")
                                         : "a user-defined link") +
              "; only the file's own datasets are read");
}

// A virtual source's file name as merge writes it: a plain name, the shard beside the joined
// file. An absolute name or one with a folder ('/', '..') reads a file from anywhere.
bool beside_the_file(const std::string& source) { return source.find('/') == std::string::npos && source != ".."; }

}  // namespace

struct DatasetReader::Impl {
  std::string path;
  h5::Handle file;
  std::map<std::string, h5::Handle> datasets;  // by path inside the file
  uint64_t positions = 0, games = 0;
  bool joined = false;              // row columns are virtual datasets over shards
  std::vector<std::string> shards;  // the files they read, as resolved from this file's folder

  // Opens a dataset and checks type and shape; returns its first dimension.
  hsize_t open_checked(hid_t parent, const std::string& prefix, const ColumnSpec& e) {
    const std::string where = prefix + e.name;
    if (!h5::has_link(parent, e.name)) throw Error(path + ": dataset '" + where + "' is missing");
    check_hard_link(parent, e.name, path, "dataset '" + where + "'");
    h5::Handle ds = h5::open_dataset(parent, e.name, path, "open dataset " + where);
    h5::Handle type = h5::dataset_type(ds, path, where);
    if (!h5::stored_as(type, e.element))
      throw Error(path + ": dataset '" + where + "' has the wrong type (expected " + h5::element_name(e.element) + ")");
    const std::vector<hsize_t> dims = h5::dims(h5::dataset_space(ds, path, where));
    if (dims.size() != size_t(e.tail_rank()) + 1 || !std::equal(dims.begin() + 1, dims.end(), e.tail.begin())) {
      std::string expected = "(N";
      for (int i = 0; i < e.tail_rank(); ++i) expected += ", " + std::to_string(e.tail[size_t(i)]);
      throw Error(path + ": dataset '" + where + "' has the wrong shape (expected " + expected + "))");
    }
    check_storage(ds, where, e, dims[0]);
    datasets[where] = std::move(ds);
    return dims[0];
  }

  // Where a dataset's values live. Only in this file (contiguous, chunked or compact layout),
  // or, for the row columns that merge joins, in legalnet shards beside it. HDF5 would also
  // read an external raw file (any file on the machine, or a FIFO that never ends) or any
  // virtual source as data, and a virtual source that is missing or shorter as zeros.
  void check_storage(hid_t ds, const std::string& where, const ColumnSpec& e, hsize_t rows) {
    h5::Handle dcpl = h5::creation_properties(ds, path, where);
    const std::string at = path + ": dataset '" + where + "' ";
    if (h5::external_count(dcpl) != 0)
      throw Error(at + "keeps its values in an external file; only data inside the file is read");
    const H5D_layout_t layout = h5::layout(dcpl);
    if (layout == H5D_CONTIGUOUS || layout == H5D_CHUNKED || layout == H5D_COMPACT) {
      check_stored_size(ds, dcpl, raw_bytes(e, rows), path, where);
      return;
    }
    const bool joinable = where == e.name && std::string(e.name) != GAME;  // merge's virtual columns
    if (layout != H5D_VIRTUAL || !joinable)
      throw Error(at + "has a storage layout this reader does not take (" +
                  (layout == H5D_VIRTUAL ? "a virtual dataset" : "layout " + std::to_string(int(layout))) + ")");
    check_virtual_sources(dcpl, where, e, rows);
    joined = true;
  }

  // A virtual column as merge makes it: shard after shard, each mapping all rows of the
  // shard's column of the same name, each shard a regular file holding a legalnet dataset
  // whose column is stored in the shard itself.
  void check_virtual_sources(hid_t dcpl, const std::string& name, const ColumnSpec& e, hsize_t rows) {
    const size_t count = h5::virtual_count(dcpl, path, name);
    const std::string at = path + ": dataset '" + name + "' ";
    // HDF5 looks for a relative source under $HDF5_VDS_PREFIX before the file's own folder,
    // and the variable outranks any prefix set on an access list: the shards checked here
    // would not be the ones read.
    if (const char* prefix = std::getenv("HDF5_VDS_PREFIX"); prefix && *prefix)
      throw Error(at + "is joined from shards, and HDF5_VDS_PREFIX ('" + printable(prefix) +
                  "') would make HDF5 read them from elsewhere than beside the file; unset it");
    const auto dir = std::filesystem::absolute(path).parent_path();
    hsize_t next_row = 0;
    const hsize_t per_row = hsize_t(e.elements_per_row());
    for (size_t i = 0; i < count; ++i) {
      const h5::VirtualMapping mapping = h5::virtual_mapping(dcpl, i, path, name);
      const std::string &source = mapping.file, &source_name = mapping.dataset;
      const std::string joined_from = at + "is joined from '" + printable(source) + "'";
      // HDF5 reads '%b' in a source name as the joined file's own name; merge writes no pattern.
      if (source.empty() || source.find('%') != std::string::npos)
        throw Error(joined_from + ", a name pattern merge never writes");
      if (!beside_the_file(source))
        throw Error(joined_from + ", which is not beside it (merge joins only shards in the file's own folder)");
      if (source_name != name)
        throw Error(joined_from + " (its dataset '" + printable(source_name) + "', not '" + name + "')");
      // The rows it fills: the next block, every trailing dimension whole.
      const hsize_t mapped = block_rows(mapping.vspace, next_row, per_row);
      if (mapped == 0) throw Error(at + "does not map its rows shard after shard, as merge does");
      // (A selection of all of the source is stored without its extent, known once it is opened.)
      if (!h5::selects_all(mapping.srcspace) && block_rows(mapping.srcspace, 0, per_row) != mapped)
        throw Error(joined_from + ", not all of its rows in order, as merge maps them");
      const std::filesystem::path resolved =
          std::filesystem::path(source).is_absolute() ? std::filesystem::path(source) : dir / source;
      check_shard(resolved, source, joined_from, name, e, mapped);
      if (std::find(shards.begin(), shards.end(), resolved.string()) == shards.end())
        shards.push_back(resolved.string());
      next_row += mapped;
    }
    if (next_row != rows)
      throw Error(at + "maps " + std::to_string(next_row) + " of its " + std::to_string(rows) + " rows");
  }

  // The rows [first, first + n) a selection covers when it is one block starting at `first`
  // with whole rows of `per_row` elements; 0 otherwise.
  hsize_t block_rows(hid_t space, hsize_t first, hsize_t per_row) const {
    h5::Selection sel;
    if (!h5::selection(space, sel) || sel.points % per_row) return 0;
    const hsize_t n = sel.points / per_row;
    if (sel.start[0] != first || sel.end[0] + 1 != first + n) return 0;
    hsize_t box = n;
    for (size_t d = 1; d < sel.dims.size(); ++d) {
      if (sel.start[d] != 0 || sel.end[d] + 1 != sel.dims[d]) return 0;
      box *= sel.dims[d];
    }
    return box == sel.points ? n : 0;  // a box with every point selected
  }

  // A shard a virtual column reads: a regular file (a FIFO would hang HDF5), not this file,
  // a legalnet dataset that still holds the rows it was joined with, its column stored in
  // itself with the column's type and shape.
  void check_shard(const std::filesystem::path& resolved, const std::string& source, const std::string& joined_from,
                   const std::string& name, const ColumnSpec& e, hsize_t rows) const {
    struct stat shard {
    }, self{};
    if (::stat(resolved.c_str(), &shard) != 0) throw Error(joined_from + ", which is missing");
    if (!S_ISREG(shard.st_mode)) throw Error(joined_from + ", which is not a regular file");
    if (::stat(path.c_str(), &self) == 0 && self.st_dev == shard.st_dev && self.st_ino == shard.st_ino)
      throw Error(joined_from + ", which is this file itself");
    h5::Handle src = h5::try_open_file(resolved.string());
    const std::string stale = joined_from + ", which no longer holds the rows it was joined with (re-run merge)";
    if (!src.valid() || !h5::has_attribute(src, "format") ||
        h5::read_string_attribute(src, "format", source) != FORMAT_NAME)
      throw Error(joined_from + ", which is not a legalnet dataset");
    if (!h5::has_attribute(src, "num_positions") ||
        uint64_t(h5::read_int_attribute(src, "num_positions", source)) != rows || !h5::has_link(src, e.name))
      throw Error(stale);
    if (h5::link_type(src, e.name) != H5L_TYPE_HARD)
      throw Error(joined_from + ", whose '" + name + "' is not stored in that file itself");
    h5::Handle ds = h5::open_dataset(src, e.name, source, "open dataset " + name);
    h5::Handle dcpl = h5::creation_properties(ds, source, name);
    const H5D_layout_t layout = h5::layout(dcpl);
    if (h5::external_count(dcpl) != 0 || (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT))
      throw Error(joined_from + ", whose '" + name + "' is not stored in that file itself");
    check_stored_size(ds, dcpl, raw_bytes(e, rows), resolved.string(), name);
    h5::Handle type = h5::dataset_type(ds, source, name);
    h5::Handle space = h5::dataset_space(ds, source, name);
    if (!h5::stored_as(type, e.element) || h5::dims(space).size() != size_t(e.tail_rank()) + 1 ||
        h5::points(space) != rows * hsize_t(e.elements_per_row()))
      throw Error(stale);
  }

  // The bytes of values `rows` rows of a column hold (at most 2^64: dimensions are 64-bit).
  static uint64_t raw_bytes(const ColumnSpec& e, hsize_t rows) {
    const uint64_t per_row = uint64_t(e.row_bytes());
    return rows > UINT64_MAX / per_row ? UINT64_MAX : rows * per_row;
  }

  hid_t dataset(const std::string& name) const {
    auto it = datasets.find(name);
    if (it == datasets.end()) throw Error(path + ": no dataset '" + name + "'");
    return it->second;
  }

  void read_slab(const std::string& name, Element memory, uint64_t start, uint64_t count, void* out) const {
    h5::read_rows(dataset(name), memory, start, count, out, path, name);
  }
};

namespace {
std::atomic<uint64_t> readers_opened{0};
}  // namespace

uint64_t DatasetReader::opened() { return readers_opened.load(); }

DatasetReader::DatasetReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  ++readers_opened;
  h5::configure_library();
  Impl& d = *impl_;
  d.path = path;
  // A FIFO or device would make HDF5 wait for data that may never come.
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(path + ": not a regular file (a dataset is read from a file on disk)");
  if (!h5::is_hdf5(path)) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw Error(path + ": cannot open: no such file or not readable");
    std::fclose(f);
    throw Error(path + ": not an HDF5 file (or truncated)");
  }
  d.file = h5::open_file(path);
  if (!h5::has_attribute(d.file, "format")) throw Error(path + ": not a legalnet dataset (no 'format' attribute)");
  const std::string format = h5::read_string_attribute(d.file, "format", path);
  if (format != FORMAT_NAME)
    throw Error(path + ": format '" + printable(format, 60) + "' is not '" + FORMAT_NAME + "'");
  const int64_t version = h5::read_int_attribute(d.file, "format_version", path);
  if (version != FORMAT_VERSION)
    throw Error(path + ": format version " + std::to_string(version) + " is not supported (this build reads version " +
                std::to_string(FORMAT_VERSION) + ")");

  for (const auto& e : ROW_COLUMNS) {
    const hsize_t n = d.open_checked(d.file, "", e);
    // The entry, not its name: names are literals, which a sanitizer build does not merge.
    if (&e == &ROW_COLUMNS[0]) d.positions = n;
    if (n != d.positions)
      throw Error(path + ": dataset '" + e.name + "' has " + std::to_string(n) + " rows, 'positions' has " +
                  std::to_string(d.positions));
  }
  if (!h5::has_link(d.file, GAMES_GROUP)) throw Error(path + ": group 'games' is missing");
  check_hard_link(d.file, GAMES_GROUP, path, "group 'games'");
  h5::Handle group = h5::open_group(d.file, GAMES_GROUP, path);
  const std::string prefix = std::string(GAMES_GROUP) + "/";
  for (const auto& e : GAME_COLUMNS) {
    const hsize_t n = d.open_checked(group, prefix, e);
    if (&e == &GAME_COLUMNS[0]) d.games = n;
    if (n != d.games) throw Error(path + ": dataset '" + prefix + e.name + "' has a different number of games");
  }
  if (uint64_t(h5::read_int_attribute(d.file, "num_positions", path)) != d.positions)
    throw Error(path + ": attribute num_positions does not match the datasets (incomplete file?)");
}

DatasetReader::~DatasetReader() = default;
DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;

std::vector<DatasetReader> open_readers(const std::vector<std::string>& paths) {
  std::vector<DatasetReader> readers;
  readers.reserve(paths.size());
  for (const auto& path : paths) readers.emplace_back(path);
  return readers;
}

const std::string& DatasetReader::path() const { return impl_->path; }
uint64_t DatasetReader::num_positions() const { return impl_->positions; }
uint64_t DatasetReader::num_games() const { return impl_->games; }
bool DatasetReader::joined() const { return impl_->joined; }
const std::vector<std::string>& DatasetReader::shards() const { return impl_->shards; }

void DatasetReader::read_positions(uint64_t start, uint64_t count, int8_t* out) const {
  impl_->read_slab(POSITIONS, Element::INT8, start, count, out);
}

void DatasetReader::read_legal_moves(uint64_t start, uint64_t count, uint8_t* out) const {
  impl_->read_slab(LEGAL_MOVES, Element::UINT8, start, count, out);
}

std::vector<int64_t> DatasetReader::read_row_column(const char* name, uint64_t start, uint64_t count) const {
  std::vector<int64_t> values(count);
  impl_->read_slab(name, Element::INT64, start, count, values.data());
  return values;
}

RowBlock DatasetReader::read_block(uint64_t start, uint64_t count) const {
  RowBlock block;
  block.path = impl_->path;
  block.start = start;
  block.count = count;
  block.planes.resize(count * encode::POSITION_SIZE);
  read_positions(start, count, block.planes.data());
  for (RowColumn c : BLOCK_COLUMNS) block.columns[size_t(c)] = read_row_column(spec(c).name, start, count);
  return block;
}

std::vector<chess::Position> DatasetReader::read_board_positions(uint64_t start, uint64_t count) const {
  const RowBlock block = read_block(start, count);
  std::vector<chess::Position> positions;
  positions.reserve(count);
  for (uint64_t i = 0; i < count; ++i) positions.push_back(block.position(i));
  return positions;
}

std::vector<int64_t> DatasetReader::read_game_column(const char* name) const {
  std::vector<int64_t> values(impl_->games);
  impl_->read_slab(std::string(GAMES_GROUP) + "/" + name, Element::INT64, 0, impl_->games, values.data());
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
