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

// Copies a row column of every shard into one real dataset, a slice at a time.
void copy_column(hid_t file, const ColumnSpec& column, const std::vector<Source>& sources, uint64_t rows,
                 const std::string& out) {
  h5::Handle ds =
      h5::create_column(file, column, rows, column.tail_rank() ? ROWS_PER_CHUNK : ROWS_PER_COLUMN_CHUNK, out);
  std::vector<char> buffer;
  for (const Source& s : sources) {
    h5::Handle src_file = h5::open_file(s.path);
    h5::Handle src = h5::open_dataset(src_file, column.name, s.path, column.name);
    constexpr uint64_t SLICE = 16384;
    for (uint64_t first = 0; first < s.rows; first += SLICE) {
      const uint64_t count = std::min(SLICE, s.rows - first);
      buffer.resize(count * size_t(column.row_bytes()));
      h5::read_rows(src, column.element, first, count, buffer.data(), s.path, column.name);
      h5::write_rows(ds, column.element, s.first_row + first, count, buffer.data(), out, column.name);
    }
  }
}

// The game column and the games table hold indices, offset per shard: they are rewritten
// (small: 8 bytes a row, about 45 a game). Returns the group games, left open until the file
// closes, as the writer leaves it.
h5::Handle write_game_columns(hid_t file, const std::vector<Source>& sources, const MergeSummary& total,
                              const std::string& out) {
  {
    h5::Handle game = h5::create_column(file, spec(RowColumn::GAME), total.positions, ROWS_PER_COLUMN_CHUNK, out);
    for (const Source& s : sources) {
      const DatasetReader reader(s.path);
      constexpr uint64_t SLICE = 1 << 20;
      for (uint64_t first = 0; first < s.rows; first += SLICE) {
        auto values = reader.read_row_column(GAME, first, std::min(SLICE, s.rows - first));
        for (auto& v : values) v += int64_t(s.first_game);
        h5::write_rows(game, Element::INT64, s.first_row + first, values.size(), values.data(), out, GAME);
      }
    }
  }
  h5::Handle group = h5::create_group(file, GAMES_GROUP, out);
  // Stored types as in dataset_format.h; values pass through int64 in memory.
  for (const ColumnSpec& spec : GAME_COLUMNS) {
    const char* name = spec.name;
    h5::Handle ds = h5::create_column(group, spec, total.games, GAMES_PER_CHUNK, out);
    const std::string column = name;
    for (const Source& s : sources) {
      auto values = DatasetReader(s.path).read_game_column(name);
      const int64_t offset = column == GAME_FIRST_ROW ? int64_t(s.first_row)
                             : column == GAME_SOURCE  ? s.first_source
                                                      : 0;
      for (auto& v : values) v += offset;
      h5::write_rows(ds, Element::INT64, s.first_game, values.size(), values.data(), out, name);
    }
  }
  return group;
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
      throw Error(in +
                  ": a shard outside the folder of --out cannot be joined virtually (a joined file's shards are "
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
  h5::Handle file = h5::create_file(atomic.created_name(), o.out, atomic.temp());

  // Per-row arrays: virtual (each shard's dataset mapped into its block of rows) or copied.
  // (The game column holds indices into the games table, offset per shard: rewritten below.)
  for (const ColumnSpec& column : ROW_COLUMNS) {
    if (&column == &spec(RowColumn::GAME)) continue;
    if (o.copy) {
      copy_column(file, column, sources, total.positions, o.out);
      continue;
    }
    std::vector<h5::VirtualBlock> blocks;
    for (const Source& s : sources) blocks.push_back({s.relative, s.path, s.first_row, s.rows});
    h5::create_virtual_column(file, column, total.positions, blocks, o.out);
  }

  h5::Handle group = write_game_columns(file, sources, total, o.out);
  write_dataset_attributes(file, provenance, total.positions, total.games, o.out);
  group.reset();
  h5::close_file(file, o.out);
  atomic.commit();
  return total;
}

}  // namespace legalnet::data
