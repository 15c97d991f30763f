#include "data/dataset_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <future>
#include <span>
#include <string_view>

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

// A one-dimensional per-row or per-game column, appended in slabs.
template <class T>
struct Column {
  const char* name;
  std::vector<T> pending;
  h5::Handle dataset;
  hsize_t written = 0;
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
  bool committed = false;
  ThreadPool& pool;
  h5::Handle file, games_group, positions, legal_moves;
  uint64_t rows = 0, games = 0, chunks_submitted = 0, chunks_written = 0;
  ChunkJob job;
  std::deque<std::future<CompressedChunk>> in_flight;

  Column<int16_t> played_move{PLAYED_MOVE, {}, {}};
  Column<int8_t> played_promotion{PLAYED_PROMOTION, {}, {}};
  Column<int64_t> game{GAME, {}, {}};
  Column<int32_t> ply{PLY, {}, {}};
  Column<uint8_t> castling{CASTLING, {}, {}};
  Column<int8_t> en_passant{EN_PASSANT, {}, {}};
  Column<int32_t> halfmove_clock{HALFMOVE_CLOCK, {}, {}};
  Column<int32_t> fullmove_number{FULLMOVE_NUMBER, {}, {}};

  Column<int64_t> g_first_row{GAME_FIRST_ROW, {}, {}};
  Column<int32_t> g_num_rows{GAME_NUM_ROWS, {}, {}};
  Column<int32_t> g_plies{GAME_PLIES, {}, {}};
  Column<int32_t> g_source{GAME_SOURCE, {}, {}};
  Column<int64_t> g_source_game{GAME_SOURCE_NUMBER, {}, {}};
  Column<int64_t> g_source_line{GAME_SOURCE_LINE, {}, {}};
  Column<int8_t> g_result{GAME_RESULT, {}, {}};
  Column<int8_t> g_termination{GAME_TERMINATION, {}, {}};

  Impl(const std::string& target, ThreadPool& p) : path(target), atomic(target), pool(p) {}

  // Creates the datasets in the order of the format's tables (dataset_format.h), each from its
  // table entry through h5::create_column, as merge does. Every table column must be one the
  // writer fills, with the C++ type of the table's element: a column added to the table and
  // not here fails at the first file written, not in a reader.
  template <class Fn>
  void create_columns(hid_t parent, std::span<const ColumnSpec> table, hsize_t chunk_rows, Fn for_each_member) {
    size_t matched = 0;
    for (const ColumnSpec& spec : table) {
      if (spec.name == std::string_view(POSITIONS) || spec.name == std::string_view(LEGAL_MOVES)) {
        // Written chunk by chunk as compressed bytes (write_front_chunk), ROWS rows a chunk.
        (spec.name == std::string_view(POSITIONS) ? positions : legal_moves) =
            h5::create_column(parent, spec, h5::EXTENDIBLE, ROWS, path);
        continue;
      }
      bool found = false;
      for_each_member([&]<class T>(Column<T>& c) {
        if (c.name != std::string_view(spec.name)) return;
        if (H5Tequal(h5::native_type<T>(), h5::native_type(spec.element)) <= 0 || spec.tail_rank() != 0)
          throw Error(std::string("dataset writer: column ") + spec.name + " is not the format's " +
                      h5::element_name(spec.element));
        c.dataset = h5::create_column(parent, spec, h5::EXTENDIBLE, chunk_rows, path);
        found = true;
      });
      if (!found) throw Error(std::string("dataset writer: no values for the format's column ") + spec.name);
      ++matched;
    }
    size_t members = 0;
    for_each_member([&](auto&) { ++members; });
    if (matched != members) throw Error("dataset writer: a column it fills is not in the format's table");
  }

  template <class T>
  void flush_column(Column<T>& c) {
    if (c.pending.empty()) return;
    const hsize_t count = c.pending.size(), total = c.written + count;
    h5::check_status(H5Dset_extent(c.dataset, &total), path, c.name);
    h5::Handle file_space(h5::check(H5Dget_space(c.dataset), path, c.name));
    h5::select_rows(file_space, c.written, count, path, c.name);
    h5::Handle mem_space(h5::check(H5Screate_simple(1, &count, nullptr), path, c.name));
    h5::check_status(H5Dwrite(c.dataset, h5::native_type<T>(), mem_space, file_space, H5P_DEFAULT, c.pending.data()),
                     path, std::string("write ") + c.name);
    c.written = total;
    c.pending.clear();
  }

  template <class Fn>
  void for_each_row_column(Fn fn) {
    fn(played_move), fn(played_promotion), fn(game), fn(ply), fn(castling), fn(en_passant), fn(halfmove_clock),
        fn(fullmove_number);
  }
  template <class Fn>
  void for_each_game_column(Fn fn) {
    fn(g_first_row), fn(g_num_rows), fn(g_plies), fn(g_source), fn(g_source_game), fn(g_source_line), fn(g_result),
        fn(g_termination);
  }

  void submit_job() {
    if (job.rows == 0) return;
    in_flight.push_back(pool.submit([j = std::move(job)] { return compress_job(j); }));
    job = ChunkJob{};
    ++chunks_submitted;
    // Bound the memory held by chunks in flight.
    while (in_flight.size() > size_t(2 * pool.size() + 2)) write_front_chunk();
    while (!in_flight.empty() && in_flight.front().wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      write_front_chunk();
  }

  void write_chunk(hid_t dataset, const char* name, const std::vector<unsigned char>& bytes) {
    const hsize_t offset[4] = {chunks_written * ROWS, 0, 0, 0};
    h5::check_status(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, offset, bytes.size(), bytes.data()), path,
                     std::string("write chunk of ") + name);
  }

  void write_front_chunk() {
    const CompressedChunk chunk = in_flight.front().get();
    in_flight.pop_front();
    // The extent must cover a chunk before it is written directly; finish() trims it.
    hsize_t dims_p[4] = {(chunks_written + 1) * ROWS, encode::PLANES, 8, 8};
    h5::check_status(H5Dset_extent(positions, dims_p), path, POSITIONS);
    hsize_t dims_m[2] = {(chunks_written + 1) * ROWS, encode::MOVE_INDICES};
    h5::check_status(H5Dset_extent(legal_moves, dims_m), path, LEGAL_MOVES);
    write_chunk(positions, POSITIONS, chunk.positions);
    write_chunk(legal_moves, LEGAL_MOVES, chunk.legal_moves);
    ++chunks_written;
  }
};

DatasetWriter::DatasetWriter(const std::string& path, ThreadPool& pool) : impl_(std::make_unique<Impl>(path, pool)) {
  h5::configure_library();
  Impl& d = *impl_;
  h5::Handle fcpl(h5::check(H5Pcreate(H5P_FILE_CREATE), path, "file properties"));
  // The temporary is made here, new and not through a link; HDF5 opens that file (its own
  // create would follow a link planted under the temporary's name and truncate its target).
  d.file = h5::Handle(H5Fcreate(d.atomic.created_name().c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT));
  h5::check(d.file.get(), path, "cannot create '" + d.atomic.temp() + "'");
  d.create_columns(d.file, ROW_COLUMNS, ROWS_PER_COLUMN_CHUNK, [&](auto fn) { d.for_each_row_column(fn); });
  h5::Handle gcpl(h5::check(H5Pcreate(H5P_GROUP_CREATE), path, "group properties"));
  h5::check_status(H5Pset_obj_track_times(gcpl, false), path, "group properties");
  d.games_group = h5::Handle(
      h5::check(H5Gcreate2(d.file, GAMES_GROUP, H5P_DEFAULT, gcpl, H5P_DEFAULT), path, "create group games"));
  d.create_columns(d.games_group, GAME_COLUMNS, GAMES_PER_CHUNK, [&](auto fn) { d.for_each_game_column(fn); });
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
  d.g_first_row.pending.push_back(int64_t(d.rows));
  d.g_num_rows.pending.push_back(int32_t(selected.size()));
  d.g_plies.pending.push_back(info.plies);
  d.g_source.pending.push_back(info.source);
  d.g_source_game.pending.push_back(info.source_game);
  d.g_source_line.pending.push_back(info.source_line);
  d.g_result.pending.push_back(info.result);
  d.g_termination.pending.push_back(info.termination);

  for (uint32_t r : selected) {
    const int8_t* planes = rows.planes.data() + size_t(r) * encode::POSITION_SIZE;
    d.job.planes.insert(d.job.planes.end(), planes, planes + encode::POSITION_SIZE);
    const uint32_t begin = r == 0 ? 0 : rows.legal_end[r - 1];
    d.job.legal.insert(d.job.legal.end(), rows.legal.begin() + begin, rows.legal.begin() + rows.legal_end[r]);
    d.job.legal_end.push_back(uint32_t(d.job.legal.size()));
    d.played_move.pending.push_back(rows.played_move[r]);
    d.played_promotion.pending.push_back(rows.played_promotion[r]);
    d.game.pending.push_back(int64_t(d.games));
    d.ply.pending.push_back(rows.ply[r]);
    d.castling.pending.push_back(rows.castling[r]);
    d.en_passant.pending.push_back(rows.en_passant[r]);
    d.halfmove_clock.pending.push_back(rows.halfmove_clock[r]);
    d.fullmove_number.pending.push_back(rows.fullmove_number[r]);
    ++d.rows;
    if (++d.job.rows == ROWS) d.submit_job();
    if (d.ply.pending.size() >= size_t(ROWS_PER_COLUMN_CHUNK))
      d.for_each_row_column([&](auto& c) { d.flush_column(c); });
  }
  ++d.games;
}

void DatasetWriter::finish(const DatasetProvenance& p) {
  Impl& d = *impl_;
  d.submit_job();
  while (!d.in_flight.empty()) d.write_front_chunk();
  hsize_t dims_p[4] = {d.rows, encode::PLANES, 8, 8};
  h5::check_status(H5Dset_extent(d.positions, dims_p), d.path, POSITIONS);
  hsize_t dims_m[2] = {d.rows, encode::MOVE_INDICES};
  h5::check_status(H5Dset_extent(d.legal_moves, dims_m), d.path, LEGAL_MOVES);
  d.for_each_row_column([&](auto& c) { d.flush_column(c); });
  d.for_each_game_column([&](auto& c) { d.flush_column(c); });

  write_dataset_attributes(d.file, p, d.rows, d.games, d.path);
  d.for_each_row_column([](auto& c) { c.dataset.reset(); });
  d.for_each_game_column([](auto& c) { c.dataset.reset(); });
  d.positions.reset();
  d.legal_moves.reset();
  d.games_group.reset();
  // Closing writes the metadata: a failure here (a full disk) must not be ignored.
  h5::check_status(H5Fclose(d.file.release()), d.path, "close");
  d.atomic.sync();
}

void DatasetWriter::commit() {
  impl_->atomic.commit();
  impl_->committed = true;
}

const std::string& DatasetWriter::finished_path() const {
  return impl_->committed ? impl_->path : impl_->atomic.temp();
}

}  // namespace legalnet::data
