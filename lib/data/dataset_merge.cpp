#include "data/dataset_merge.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <string_view>

#include "data/dataset_format.h"
#include "data/dataset_reader.h"
#include "data/dataset_writer.h"
#include "data/h5.h"
#include "util/files.h"

namespace legalnet::data {
namespace {

namespace fs = std::filesystem;

struct Source {
  std::string path;      // as given
  std::string relative;  // from the output's folder, as the virtual datasets store it
  uint64_t rows, games, first_row, first_game;
  int64_t first_source;  // offset of its sources in the merged list
  std::vector<std::string> sources;
};

struct Shape {
  const char* name;
  hid_t type;
};

void write_rows(hid_t dataset, hid_t type, uint64_t first, uint64_t count, const void* data, const std::string& path,
                const char* name) {
  if (count == 0) return;
  h5::Handle file_space(h5::check(H5Dget_space(dataset), path, name));
  const std::vector<hsize_t> counts = h5::select_rows(file_space, first, count, path, name);
  h5::Handle mem(h5::check(H5Screate_simple(int(counts.size()), counts.data(), nullptr), path, name));
  h5::check_status(H5Dwrite(dataset, type, mem, file_space, H5P_DEFAULT, data), path, std::string("write ") + name);
}

}  // namespace

MergeSummary merge_datasets(const MergeOptions& o) {
  std::vector<NamedPath> shards;
  for (const auto& in : o.shards) shards.push_back({"a shard", in});
  check_outputs_are_not_inputs({{"--out", o.out}}, shards);
  h5::configure_library();
  const fs::path out_dir = fs::absolute(o.out).parent_path();

  // Check everything first: a missing or foreign shard stops the merge before any output.
  std::vector<Source> sources;
  MergeSummary total;
  DatasetProvenance provenance;
  int64_t source_count = 0;
  for (const auto& in : o.shards) {
    const DatasetReader reader(in);
    // The output may not be a file this input reads either: replacing a shard of a joined
    // input would turn it into a file that maps itself.
    std::vector<NamedPath> read_by_input;
    for (const auto& shard : reader.shards()) read_by_input.push_back({"a shard of '" + in + "'", shard});
    check_outputs_are_not_inputs({{"--out", o.out}}, read_by_input);
    Source s;
    s.path = in;
    s.relative = fs::relative(fs::absolute(in), out_dir).string();
    if (!o.copy && reader.joined())
      throw Error(in + " is itself joined from shards: merge its shards, or merge with --copy");
    // The readers take a joined file's shards only from its own folder (a source named with a
    // folder could be any file on the machine).
    if (!o.copy && s.relative.find('/') != std::string::npos)
      throw Error(in + ": a shard outside the folder of --out cannot be joined virtually (a joined file's shards are "
                  "read only from its own folder); put it beside --out, or merge with --copy");
    // HDF5 reads '%' in a virtual source's name as a pattern ('%b': the joined file's name).
    if (!o.copy && s.relative.find('%') != std::string::npos)
      throw Error(in + ": a shard whose path has a '%' cannot be joined virtually; merge with --copy");
    s.rows = reader.num_positions();
    s.games = reader.num_games();
    s.first_row = total.positions;
    s.first_game = total.games;
    s.sources = reader.string_list_attribute("sources");
    s.first_source = source_count;
    source_count += int64_t(s.sources.size());
    provenance.sources.insert(provenance.sources.end(), s.sources.begin(), s.sources.end());
    if (sources.empty()) {
      provenance.include_final = reader.int_attribute("include_final") != 0;
      provenance.dedupe = reader.int_attribute("dedupe") != 0;
    }
    total.positions += s.rows;
    total.games += s.games;
    sources.push_back(std::move(s));
  }
  provenance.tool = "tensorize merge";
  provenance.command_line = o.command_line;
  provenance.split = o.copy ? "merged (copied)" : "merged (virtual)";
  provenance.merged_from = o.shards;

  AtomicPath atomic(o.out);
  // Made new, never through a link planted under the temporary's name (see DatasetWriter).
  h5::Handle file(h5::check(H5Fcreate(atomic.created_name().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), o.out,
                            "cannot create '" + atomic.temp() + "'"));

  // Per-row arrays: virtual (each shard's dataset mapped into its block of rows) or copied.
  // (The game column holds indices into the games table, offset per shard: rewritten below.)
  for (const ColumnSpec& column : ROW_COLUMNS) {
    if (column.name == std::string(GAME)) continue;
    const Shape shape{column.name, h5::native_type(column.element)};
    const std::vector<hsize_t> dims = h5::column_dims(column, total.positions);
    if (o.copy) {
      h5::Handle ds = h5::create_column(file, column, total.positions,
                                        column.tail_rank() ? ROWS_PER_CHUNK : ROWS_PER_COLUMN_CHUNK, o.out);
      const size_t row_bytes = H5Tget_size(shape.type) * size_t(column.elements_per_row());
      std::vector<char> buffer;
      for (const Source& s : sources) {
        h5::Handle src_file(h5::check(H5Fopen(s.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), s.path, "open"));
        h5::Handle src(h5::check(H5Dopen2(src_file, shape.name, H5P_DEFAULT), s.path, shape.name));
        constexpr uint64_t SLICE = 16384;
        for (uint64_t first = 0; first < s.rows; first += SLICE) {
          const uint64_t count = std::min(SLICE, s.rows - first);
          buffer.resize(count * row_bytes);
          h5::Handle src_space(h5::check(H5Dget_space(src), s.path, shape.name));
          const std::vector<hsize_t> counts = h5::select_rows(src_space, first, count, s.path, shape.name);
          h5::Handle mem(h5::check(H5Screate_simple(int(counts.size()), counts.data(), nullptr), s.path, shape.name));
          h5::check_status(H5Dread(src, shape.type, mem, src_space, H5P_DEFAULT, buffer.data()), s.path,
                           std::string("read ") + shape.name);
          write_rows(ds, shape.type, s.first_row + first, count, buffer.data(), o.out, shape.name);
        }
      }
      continue;
    }
    h5::Handle space(h5::check(H5Screate_simple(int(dims.size()), dims.data(), nullptr), o.out, shape.name));
    h5::Handle dcpl(h5::check(H5Pcreate(H5P_DATASET_CREATE), o.out, shape.name));
    h5::check_status(H5Pset_obj_track_times(dcpl, false), o.out, shape.name);
    for (const Source& s : sources) {
      if (s.rows == 0) continue;
      const std::vector<hsize_t> src_dims = h5::select_rows(space, s.first_row, s.rows, o.out, shape.name);
      h5::Handle src_space(
          h5::check(H5Screate_simple(int(src_dims.size()), src_dims.data(), nullptr), o.out, shape.name));
      h5::check_status(H5Pset_virtual(dcpl, space, s.relative.c_str(), shape.name, src_space), o.out,
                       std::string("map ") + shape.name + " of " + s.path);
    }
    H5Sselect_all(space);
    h5::Handle ds(h5::check(H5Dcreate2(file, shape.name, shape.type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), o.out,
                            std::string("create virtual dataset ") + shape.name));
  }

  // The game column and the games table hold indices, offset per shard: they are rewritten
  // (small: 8 bytes a row, about 45 a game).
  {
    const ColumnSpec& spec = *std::find_if(std::begin(ROW_COLUMNS), std::end(ROW_COLUMNS),
                                           [](const ColumnSpec& c) { return c.name == std::string_view(GAME); });
    h5::Handle game = h5::create_column(file, spec, total.positions, ROWS_PER_COLUMN_CHUNK, o.out);
    for (const Source& s : sources) {
      const DatasetReader reader(s.path);
      constexpr uint64_t SLICE = 1 << 20;
      for (uint64_t first = 0; first < s.rows; first += SLICE) {
        auto values = reader.read_row_column(GAME, first, std::min(SLICE, s.rows - first));
        for (auto& v : values) v += int64_t(s.first_game);
        write_rows(game, H5T_NATIVE_INT64, s.first_row + first, values.size(), values.data(), o.out, GAME);
      }
    }
  }
  h5::Handle gcpl(h5::check(H5Pcreate(H5P_GROUP_CREATE), o.out, "group properties"));
  h5::check_status(H5Pset_obj_track_times(gcpl, false), o.out, "group properties");
  h5::Handle group(
      h5::check(H5Gcreate2(file, GAMES_GROUP, H5P_DEFAULT, gcpl, H5P_DEFAULT), o.out, "create group games"));
  // Stored types as in dataset_format.h; values pass through int64 in memory.
  for (const ColumnSpec& spec : GAME_COLUMNS) {
    const char* name = spec.name;
    h5::Handle ds = h5::create_column(group, spec, total.games, GAMES_PER_CHUNK, o.out);
    const std::string column = name;
    for (const Source& s : sources) {
      auto values = DatasetReader(s.path).read_game_column(name);
      const int64_t offset = column == GAME_FIRST_ROW ? int64_t(s.first_row)
                             : column == GAME_SOURCE  ? s.first_source
                                                      : 0;
      for (auto& v : values) v += offset;
      write_rows(ds, H5T_NATIVE_INT64, s.first_game, values.size(), values.data(), o.out, name);
    }
  }
  write_dataset_attributes(file, provenance, total.positions, total.games, o.out);
  group.reset();
  h5::check_status(H5Fclose(file.release()), o.out, "close");
  atomic.commit();
  return total;
}

}  // namespace legalnet::data
