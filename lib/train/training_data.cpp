#include "train/training_data.h"

#include <fmt/core.h>

#include <charconv>
#include <cstring>

#include "chess/movegen.h"
#include "data/dataset_format.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "util/choices.h"
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

RowWeights RowWeights::parse(std::string_view text) {
  RowWeights w;
  std::array<bool, chess::SITUATION_NB> named{};
  for (size_t start = 0; !text.empty() && start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, end - start);
    start = end + 1;
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos)
      throw Error("'" + printable(entry) +
                  "' is not NAME=W (e.g. many_queens=4; the names: " + choice_list(chess::SITUATIONS) + ")");
    const chess::Situation s = find_choice(chess::SITUATIONS, entry.substr(0, eq), "situation").value;
    const std::string_view number = entry.substr(eq + 1);
    int weight = 0;
    const auto [end_of_number, error] = std::from_chars(number.data(), number.data() + number.size(), weight);
    if (error != std::errc() || end_of_number != number.data() + number.size() || weight < 1 || weight > MAX_ROW_WEIGHT)
      throw Error(fmt::format("{}: the weight '{}' is not an integer in 1..{}", printable(entry.substr(0, eq)),
                              printable(number), MAX_ROW_WEIGHT));
    if (named[size_t(s)]) throw Error(printable(entry.substr(0, eq)) + " is named twice");
    named[size_t(s)] = true;
    w.weight[size_t(s)] = weight;
  }
  return w;
}

void CompactPositions::append_row(const CompactPositions& o, size_t r) {
  for_each_column(*this, o, [r](auto& mine, const auto& theirs, size_t width) {
    mine.insert(mine.end(), theirs.begin() + long(r * width), theirs.begin() + long((r + 1) * width));
  });
  legal.insert(legal.end(), o.legal.begin() + long(o.legal_begin[r]), o.legal.begin() + long(o.legal_begin[r + 1]));
  legal_begin.push_back(legal.size());
}

void read_rows(const data::DatasetReader& reader, uint64_t start, uint64_t count, int64_t game_offset,
               int position_ply_limit, const std::function<bool(int64_t game)>& keep_game, CompactPositions& out) {
  using data::RowColumn;
  const data::RowBlock block = reader.read_block(start, count);
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t ply = block.at(RowColumn::PLY, i), game = game_offset + block.at(RowColumn::GAME, i);
    if (!within_ply_limit(ply, position_ply_limit)) continue;
    if (keep_game && !keep_game(game)) continue;
    // Checked whole before any value is used (kings, castling rights, en passant).
    const chess::Position pos = block.position(i);
    out.side.push_back(pos.side_to_move() == chess::WHITE ? 1 : -1);
    out.castling.push_back(pos.castling_rights());
    out.en_passant.push_back(int8_t(block.at(RowColumn::EN_PASSANT, i)));
    out.squares.resize(out.squares.size() + 64);
    encode::square_codes(block.planes_of(i), &out.squares[out.squares.size() - 64]);
    // The targets: the legal moves of the row's position, generated, not read. The dataset's
    // masks hold the same moves (this move generator wrote them), but inflating 4,096 bytes a
    // row was most of the cost of loading (30 GB for 7 M rows) and of streaming.
    const chess::MoveList legal(pos);
    for (chess::Move m : legal) {
      if (m.kind() == chess::MoveKind::PROMOTION && m.promotion() != chess::QUEEN) continue;  // one index for all four
      out.legal.push_back(uint16_t(encode::move_index(m)));
    }
    out.legal_begin.push_back(out.legal.size());
    out.game.push_back(game);
    out.ply.push_back(int32_t(ply));
    out.situations.push_back(uint16_t(chess::situations_of(pos, legal)));
  }
}

CompactPositions load_positions(const std::vector<std::string>& paths, const LoadOptions& options) {
  return load_positions(data::open_readers(paths), options);
}

CompactPositions load_positions(const std::vector<data::DatasetReader>& readers, const LoadOptions& options) {
  CompactPositions out;
  uint64_t total = 0;
  for (const auto& reader : readers) total += reader.num_positions();
  Progress progress("positions loaded", total, !options.quiet && stderr_is_terminal());
  uint64_t done = 0;
  data::for_each_row_slice(readers, [&](const data::RowSlice& s) {
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
  for_each_column(*this, *this, [n](auto& column, const auto&, size_t width) { column.resize(n * width); });
  legal.resize(legal_begin[n]);
  legal_begin.resize(n + 1);
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
