#include "train/training_data.h"

#include <fmt/core.h>

#include <cstring>

#include "chess/movegen.h"
#include "data/dataset_format.h"
#include "data/dataset_reader.h"
#include "encode/attack_planes.h"
#include "encode/encode.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/rng.h"

namespace legalnet::train {

encode::BoardState CompactPositions::state(size_t r) const {
  encode::BoardState s;
  std::memcpy(s.squares, &squares[r * 64], 64);
  s.side = side[r];
  s.castling = castling[r];
  s.en_passant = en_passant[r];
  return s;
}

void CompactPositions::expand_inputs(size_t r, encode::InputKind kind, float* out) const {
  encode::write_inputs(kind, state(r), out);
}

void CompactPositions::expand_targets(size_t r, encode::InputKind kind, float* out) const {
  encode::write_targets(kind, side[r], legal.data() + legal_begin[r], legal.data() + legal_begin[r + 1], out);
}

void CompactPositions::append_row(const CompactPositions& o, size_t r) {
  squares.insert(squares.end(), o.squares.begin() + long(r * 64), o.squares.begin() + long(r * 64 + 64));
  side.push_back(o.side[r]);
  castling.push_back(o.castling[r]);
  en_passant.push_back(o.en_passant[r]);
  legal.insert(legal.end(), o.legal.begin() + long(o.legal_begin[r]), o.legal.begin() + long(o.legal_begin[r + 1]));
  legal_begin.push_back(legal.size());
  game.push_back(o.game[r]);
  ply.push_back(o.ply[r]);
  in_check.push_back(o.in_check[r]);
  rare.push_back(o.rare[r]);
}

void read_rows(const data::DatasetReader& reader, uint64_t start, uint64_t count, int64_t game_offset,
               int position_ply_limit, const std::function<bool(int64_t game)>& keep_game, CompactPositions& out) {
  thread_local std::vector<int8_t> planes;
  planes.resize(count * encode::POSITION_SIZE);
  reader.read_positions(start, count, planes.data());
  const auto games = reader.read_row_column(data::GAME, start, count);
  const auto plies = reader.read_row_column(data::PLY, start, count);
  const auto castling = reader.read_row_column(data::CASTLING, start, count);
  const auto en_passant = reader.read_row_column(data::EN_PASSANT, start, count);
  for (uint64_t i = 0; i < count; ++i) {
    if (!within_ply_limit(plies[i], position_ply_limit)) continue;
    if (keep_game && !keep_game(game_offset + games[i])) continue;
    const int8_t* p = &planes[i * encode::POSITION_SIZE];
    const auto bad_row = [&](const std::string& what) {
      return Error(fmt::format("{}: row {}: {}", reader.path(), start + i, what));
    };
    for (int k = 0; k < encode::POSITION_SIZE; ++k)
      if (p[k] < -1 || p[k] > 1)
        throw bad_row(fmt::format("positions[{}][{}][{}] is {}, not -1, 0 or +1", k / 64, k / 8 % 8, k % 8, p[k]));
    if (castling[i] < 0 || castling[i] > 15) throw bad_row(fmt::format("castling is {}, not 0..15", castling[i]));
    if (en_passant[i] < -1 || en_passant[i] > 63)
      throw bad_row(fmt::format("en_passant is {}, not -1..63", en_passant[i]));
    out.side.push_back(p[0] > 0 ? 1 : -1);
    out.castling.push_back(uint8_t(castling[i]));
    out.en_passant.push_back(int8_t(en_passant[i]));
    out.squares.resize(out.squares.size() + 64);
    encode::square_codes(p, &out.squares[out.squares.size() - 64]);
    // The targets: the legal moves of the row's position, generated, not read. The dataset's
    // masks hold the same moves (this move generator wrote them), but inflating 4,096 bytes a
    // row was most of the cost of loading (30 GB for 7 M rows) and of streaming; the position
    // is also checked whole on the way (kings, castling rights, en passant).
    const chess::Position pos = [&] {
      try {
        return encode::decode_position(p, uint8_t(castling[i]), int(en_passant[i]), 0, 1);
      } catch (const Error& e) {
        throw bad_row(std::string("not a position: ") + e.what());
      }
    }();
    const chess::MoveList legal(pos);
    for (chess::Move m : legal) {
      if (m.kind() == chess::MoveKind::PROMOTION && m.promotion() != chess::QUEEN) continue;  // one index for all four
      out.legal.push_back(uint16_t(encode::move_index(m)));
    }
    out.legal_begin.push_back(out.legal.size());
    out.game.push_back(game_offset + games[i]);
    out.ply.push_back(int32_t(plies[i]));
    out.in_check.push_back(pos.in_check());
    out.rare.push_back(encode::has_rare_move(legal));
  }
}

CompactPositions load_positions(const std::vector<std::string>& paths, const LoadOptions& options) {
  CompactPositions out;
  uint64_t total = 0;
  for (const auto& p : paths) total += data::DatasetReader(p).num_positions();
  Progress progress("positions loaded", total, !options.quiet && stderr_is_terminal());
  uint64_t done = 0;
  data::for_each_row_slice(paths, [&](const data::RowSlice& s) {
    if (options.max_rows && out.size() >= options.max_rows) return false;
    read_rows(s.reader, s.start, s.count, s.game_offset, options.position_ply_limit, {}, out);
    done += s.count;
    progress.update(done);
    return true;
  });
  if (options.max_rows) out.keep_first(options.max_rows);
  return out;
}

void CompactPositions::keep_first(size_t n) {
  if (n >= size()) return;
  squares.resize(n * 64);
  side.resize(n);
  castling.resize(n);
  en_passant.resize(n);
  legal.resize(legal_begin[n]);
  legal_begin.resize(n + 1);
  game.resize(n);
  ply.resize(n);
  in_check.resize(n);
  rare.resize(n);
}

bool is_validation_game(int64_t game, double fraction, uint64_t seed) {
  GameRng rng(seed ^ 0x5eed5011177ULL, uint64_t(game));
  return rng.uniform() < fraction;
}

void split_by_game(const CompactPositions& all, double fraction, uint64_t seed, CompactPositions& train,
                   CompactPositions& validation) {
  for (size_t r = 0; r < all.size(); ++r)
    (is_validation_game(all.game[r], fraction, seed) ? validation : train).append_row(all, r);
}

}  // namespace legalnet::train
