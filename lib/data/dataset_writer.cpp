#include "data/dataset_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <future>

#include "data/column_values.h"
#include "data/dataset_format.h"
#include "data/h5.h"
#include "data/sparse_deflate.h"
#include "encode/encode.h"
#include "util/files.h"
#include "util/provenance.h"
#include "util/thread_pool.h"

namespace legalnet::data {
namespace {

constexpr int ROWS = ROWS_PER_CHUNK;

// The raw rows of one chunk of positions and legal_moves, waiting for compression.
struct ChunkJob {
  std::vector<int8_t> planes;
  std::vector<uint16_t> legal;
  std::vector<uint32_t> legal_end;
  int rows = 0;
};

struct CompressedChunk {
  std::vector<unsigned char> positions, legal_moves;
};

// A chunk in zlib's format (RFC 1950), the stream HDF5's deflate filter inflates: a two-byte
// header, a raw deflate stream and the Adler-32 of the bytes. The shuffle filter that precedes
// deflate is the identity for one-byte elements, so the bytes need no shuffling.
void begin_zlib(std::vector<unsigned char>& out) {
  out.clear();
  out.push_back(0x78), out.push_back(0x01);  // deflate, 32 KiB window, the fastest levels
}

void end_zlib(uint32_t adler, std::vector<unsigned char>& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>(adler >> (24 - 8 * i)));
}

// The planes of a chunk, deflated by zlib at level 1 (compress2's settings, byte for byte).
// Each thread keeps its deflate state between chunks.
std::vector<unsigned char> deflate_planes(const void* data, size_t size) {
  struct Deflater {
    z_stream z{};
    Deflater() {
      // windowBits -15: raw deflate with compress2's 32 KiB window; memLevel 8 is compress2's.
      if (deflateInit2(&z, DEFLATE_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error("zlib: out of memory");
    }
    ~Deflater() { deflateEnd(&z); }
  };
  thread_local Deflater d;
  if (deflateReset(&d.z) != Z_OK) throw Error("zlib compression failed");
  std::vector<unsigned char> out;
  begin_zlib(out);
  out.resize(2 + deflateBound(&d.z, uLong(size)));
  d.z.next_in = static_cast<Bytef*>(const_cast<void*>(data));
  d.z.avail_in = uInt(size);
  d.z.next_out = out.data() + 2;
  d.z.avail_out = uInt(out.size() - 2);
  if (deflate(&d.z, Z_FINISH) != Z_STREAM_END) throw Error("zlib compression failed");
  out.resize(2 + d.z.total_out);
  end_zlib(uint32_t(adler32(1, static_cast<const Bytef*>(data), uInt(size))), out);
  return out;
}

// The Adler-32 of `size` bytes that are zero but for a 1 at each of `ones` (distinct offsets):
// A = 1 + sum(b), B = sum over i of (1 + sum of b[j <= i]) = size + sum of b[j] * (size - j).
uint32_t sparse_adler32(size_t size, const std::vector<uint32_t>& ones) {
  constexpr uint64_t MOD = 65521;
  uint64_t a = 1, b = size % MOD;
  for (uint32_t j : ones) a += 1, b += size - j;  // at most 2^20 terms below 2^20: no overflow
  return uint32_t((b % MOD) << 16 | (a % MOD));
}

CompressedChunk compress_job(const ChunkJob& job) {
  // Full-size chunks, zero-padded past the last row: HDF5 stores edge chunks whole.
  std::vector<int8_t> planes(size_t(ROWS) * encode::POSITION_SIZE, 0);
  std::memcpy(planes.data(), job.planes.data(), job.planes.size());
  // The masks are never laid out: their stream and checksum come from the offsets of the ones
  // (data/sparse_deflate.h): tensorize took 2.6 s of CPU for 1.08 M positions instead of 7.2 s.
  constexpr size_t MASK_BYTES = size_t(ROWS) * encode::MOVE_INDICES;
  thread_local std::vector<uint32_t> ones;
  ones.clear();
  uint32_t begin = 0;
  for (int r = 0; r < job.rows; ++r) {
    const uint32_t row = uint32_t(r) * encode::MOVE_INDICES;
    for (uint32_t i = begin; i < job.legal_end[size_t(r)]; ++i) ones.push_back(row + job.legal[i]);
    begin = job.legal_end[size_t(r)];
  }
  std::sort(ones.begin(), ones.end());
  ones.erase(std::unique(ones.begin(), ones.end()), ones.end());  // each byte is set once
  CompressedChunk chunk{deflate_planes(planes.data(), planes.size()), {}};
  begin_zlib(chunk.legal_moves);
  deflate_ones(MASK_BYTES, ones, chunk.legal_moves);
  end_zlib(sparse_adler32(MASK_BYTES, ones), chunk.legal_moves);
  return chunk;
}

// The one-value-per-row columns of a table, gathered in memory and appended in slabs: the
// dataset of each, and the rows written so far (the same for every column of the table).
template <class Id, size_t N>
struct PendingTable {
  ColumnSet<Id, N> pending;
  std::array<h5::Handle, N> datasets;
  hsize_t written = 0;
  explicit PendingTable(const ColumnSpec (&table)[N]) : pending(table) {}
};

}  // namespace

void write_dataset_attributes(hid_t file, const DatasetProvenance& p, uint64_t rows, uint64_t games,
                              const std::string& f) {
  const hid_t root = file;
  h5::write_string_attribute(root, "format", FORMAT_NAME, f);
  h5::write_int_attribute(root, "format_version", FORMAT_VERSION, f);
  h5::write_int_attribute(root, "num_positions", int64_t(rows), f);
  h5::write_int_attribute(root, "num_games", int64_t(games), f);
  h5::write_string_attribute(root, "planes", "side_to_move,pawn,knight,bishop,rook,queen,king", f);
  h5::write_string_attribute(root, "plane_convention",
                             "positions[n, plane, rank, file], rank 0 = rank 1, file 0 = file a. Plane 0: +1 on every "
                             "square when white is to move, -1 when black is. Planes 1-6 (pawn, knight, bishop, rook, "
                             "queen, king): +1 for a white piece, -1 for a black piece, 0 for none.",
                             f);
  h5::write_string_attribute(root, "move_index",
                             "legal_moves[n, from * 64 + to] with square = rank * 8 + file (a1 = 0, h8 = 63). The four "
                             "promotions of a pawn move share its index; castling is the king's move (e1g1).",
                             f);
  h5::write_string_attribute(
      root, "rows",
      "one row per position from which a move was played, in game then ply order" +
          std::string(p.include_final ? ", plus each game's final position (played_move -1)" : "") +
          (p.dedupe ? "; positions already written (same Zobrist key) dropped" : ""),
      f);
  h5::write_string_attribute(root, "result_codes", "1 = 1-0, 0 = 1/2-1/2, -1 = 0-1, -2 = * or missing", f);
  h5::write_string_list_attribute(
      root, "termination_codes",
      {"none", "checkmate", "insufficient material", "stalemate", "seventy-five-move rule", "fivefold repetition"}, f);
  h5::write_string_attribute(root, "tool", p.tool, f);
  h5::write_string_attribute(root, "tool_version", tool_version(), f);
  h5::write_string_attribute(root, "command_line", p.command_line, f);
  h5::write_string_list_attribute(root, "sources", p.sources, f);
  h5::write_string_attribute(root, "split", p.split, f);
  h5::write_int_attribute(root, "split_seed", int64_t(p.split_seed), f);
  h5::write_int_attribute(root, "include_final", p.include_final, f);
  h5::write_int_attribute(root, "dedupe", p.dedupe, f);
  if (!p.merged_from.empty()) h5::write_string_list_attribute(root, "merged_from", p.merged_from, f);
}

struct DatasetWriter::Impl {
  std::string path;
  AtomicPath atomic;
  ThreadPool& pool;
  h5::Handle file, games_group, positions, legal_moves;
  uint64_t rows = 0, games = 0, chunks_submitted = 0, chunks_written = 0;
  ChunkJob job;
  std::deque<std::future<CompressedChunk>> in_flight;
  // positions and legal_moves go chunk by chunk through the compression tasks; the other
  // columns of ROW_COLUMNS, and all of GAME_COLUMNS, through these.
  PendingTable<RowColumn, ROW_COLUMN_COUNT> row_columns{ROW_COLUMNS};
  PendingTable<GameColumn, GAME_COLUMN_COUNT> game_columns{GAME_COLUMNS};

  Impl(const std::string& target, ThreadPool& p) : path(target), atomic(target), pool(p) {}

  // Creates the datasets in the order of a format table (dataset_format.h), each from its
  // entry through h5::create_column, as merge does. positions and legal_moves are written
  // chunk by chunk as compressed bytes (write_front_chunk), ROWS rows a chunk.
  template <class Table>
  void create_columns(hid_t parent, Table& table, hsize_t chunk_rows) {
    size_t i = 0;
    for (const ColumnValues& c : table.pending) {
      const ColumnSpec& spec = c.spec();
      const bool chunked = &spec == &data::spec(RowColumn::POSITIONS) || &spec == &data::spec(RowColumn::LEGAL_MOVES);
      h5::Handle& dataset = !chunked ? table.datasets[i] : &spec == &ROW_COLUMNS[0] ? positions : legal_moves;
      dataset = h5::create_column(parent, spec, h5::EXTENDIBLE, chunked ? ROWS : chunk_rows, path);
      ++i;
    }
  }

  // Appends the pending values of every one-value-per-row column of a table.
  template <class Table>
  void flush(Table& table) {
    size_t i = 0, count = 0;
    for (ColumnValues& c : table.pending) {
      h5::Handle& dataset = table.datasets[i++];
      if (!dataset.valid() || c.empty()) continue;
      count = c.rows();
      h5::set_rows(dataset, c.spec(), table.written + count, path);
      h5::write_rows(dataset, c.spec().element, table.written, count, c.data(), path, c.spec().name);
      c.clear();
    }
    table.written += count;
  }

  void submit_job() {
    if (job.rows == 0) return;
    in_flight.push_back(pool.submit([j = std::move(job)] { return compress_job(j); }));
    job = ChunkJob{};
    ++chunks_submitted;
    // Bound the memory held by chunks in flight. A chunk is written when the queue is full, never
    // because it happened to be ready: the order of the file's writes, and so its bytes, depend on
    // the rows alone, not on how fast the threads ran (--threads 2 twice gives the same file).
    while (in_flight.size() > size_t(2 * pool.size() + 2)) write_front_chunk();
  }

  void write_front_chunk() {
    const CompressedChunk chunk = in_flight.front().get();
    in_flight.pop_front();
    // The extent must cover a chunk before it is written directly; finish() trims it.
    set_chunked_rows((chunks_written + 1) * ROWS);
    h5::write_chunk(positions, chunks_written * ROWS, chunk.positions, path, POSITIONS);
    h5::write_chunk(legal_moves, chunks_written * ROWS, chunk.legal_moves, path, LEGAL_MOVES);
    ++chunks_written;
  }

  void set_chunked_rows(hsize_t n) {
    h5::set_rows(positions, spec(RowColumn::POSITIONS), n, path);
    h5::set_rows(legal_moves, spec(RowColumn::LEGAL_MOVES), n, path);
  }
};

DatasetWriter::DatasetWriter(const std::string& path, ThreadPool& pool) : impl_(std::make_unique<Impl>(path, pool)) {
  h5::configure_library();
  Impl& d = *impl_;
  // The temporary is made here, new and not through a link; HDF5 opens that file (its own
  // create would follow a link planted under the temporary's name and truncate its target).
  d.file = h5::create_file(d.atomic.created_name(), path, d.atomic.temp());
  d.create_columns(d.file, d.row_columns, ROWS_PER_COLUMN_CHUNK);
  d.games_group = h5::create_group(d.file, GAMES_GROUP, path);
  d.create_columns(d.games_group, d.game_columns, GAMES_PER_CHUNK);
}

DatasetWriter::~DatasetWriter() {
  // Let compression tasks end before their futures go away; errors no longer matter here.
  for (auto& f : impl_->in_flight) f.wait();
}

uint64_t DatasetWriter::rows() const { return impl_->rows; }
uint64_t DatasetWriter::games() const { return impl_->games; }
const std::string& DatasetWriter::path() const { return impl_->path; }

void DatasetWriter::add_game(const GameInfo& info, const EncodedRows& rows, const std::vector<uint32_t>& selected) {
  Impl& d = *impl_;
  auto& g = d.game_columns.pending;
  g[GameColumn::FIRST_ROW].push(int64_t(d.rows));
  g[GameColumn::NUM_ROWS].push(int64_t(selected.size()));
  g[GameColumn::PLIES].push(info.plies);
  g[GameColumn::SOURCE].push(info.source);
  g[GameColumn::SOURCE_NUMBER].push(info.source_game);
  g[GameColumn::SOURCE_LINE].push(info.source_line);
  g[GameColumn::RESULT].push(info.result);
  g[GameColumn::TERMINATION].push(info.termination);

  auto& pending = d.row_columns.pending;
  // Every column the writer takes from the rows must hold a value for each of them: a column
  // added to the format but not to EncodedRows::add fails here, not in a reader.
  for (size_t c = 0; c < ROW_COLUMN_COUNT; ++c)
    if (d.row_columns.datasets[c].valid() && RowColumn(c) != RowColumn::GAME &&
        rows.columns[RowColumn(c)].rows() != rows.size())
      throw Error(std::string("dataset writer: no values for the format's column ") + ROW_COLUMNS[c].name);
  for (uint32_t r : selected) {
    const auto* planes = reinterpret_cast<const int8_t*>(rows.columns[RowColumn::POSITIONS].row(r));
    d.job.planes.insert(d.job.planes.end(), planes, planes + encode::POSITION_SIZE);
    const uint32_t begin = r == 0 ? 0 : rows.legal_end[r - 1];
    d.job.legal.insert(d.job.legal.end(), rows.legal.begin() + begin, rows.legal.begin() + rows.legal_end[r]);
    d.job.legal_end.push_back(uint32_t(d.job.legal.size()));
    for (size_t c = 0; c < ROW_COLUMN_COUNT; ++c) {
      const auto id = RowColumn(c);
      if (!d.row_columns.datasets[c].valid()) continue;  // positions and legal_moves: the chunk job
      if (id == RowColumn::GAME)
        pending[id].push(int64_t(d.games));
      else
        pending[id].append_row(rows.columns[id], r);
    }
    ++d.rows;
    if (++d.job.rows == ROWS) d.submit_job();
    if (pending[RowColumn::PLY].rows() >= size_t(ROWS_PER_COLUMN_CHUNK)) d.flush(d.row_columns);
  }
  ++d.games;
}

void DatasetWriter::finish(const DatasetProvenance& p) {
  Impl& d = *impl_;
  d.submit_job();
  while (!d.in_flight.empty()) d.write_front_chunk();
  d.set_chunked_rows(d.rows);
  d.flush(d.row_columns);
  d.flush(d.game_columns);

  write_dataset_attributes(d.file, p, d.rows, d.games, d.path);
  for (auto& dataset : d.row_columns.datasets) dataset.reset();
  for (auto& dataset : d.game_columns.datasets) dataset.reset();
  d.positions.reset();
  d.legal_moves.reset();
  d.games_group.reset();
  h5::close_file(d.file, d.path);
  d.atomic.sync();
}

AtomicPath& DatasetWriter::temporary() { return impl_->atomic; }

const std::string& DatasetWriter::finished_path() const {
  return impl_->atomic.committed() ? impl_->path : impl_->atomic.temp();
}

}  // namespace legalnet::data
