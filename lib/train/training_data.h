// Dataset rows held in memory compactly for training: 64 signed piece codes
// and the side to move per position (65 bytes instead of 448), legal moves as index lists
// (about 60 bytes instead of 4096). Batches expand them to planes and masks.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chess/situations.h"
#include "encode/inputs.h"

namespace legalnet::data {
class DatasetReader;
}

namespace legalnet::train {

struct CompactPositions {
  std::vector<int8_t> squares;              // 64 per row: +type for white, -type for black, 0 empty
  std::vector<int8_t> side;                 // +1 white to move, -1 black
  std::vector<uint8_t> castling;            // castling rights bits (dataset column `castling`)
  std::vector<int8_t> en_passant;           // legal en-passant target square, or -1
  std::vector<uint16_t> legal;              // legal move indices of all rows
  std::vector<uint64_t> legal_begin = {0};  // row r's moves are legal[legal_begin[r] .. legal_begin[r+1])
  std::vector<int64_t> game;                // game number, unique across the loaded files
  std::vector<int32_t> ply;
  std::vector<uint16_t> situations;  // chess::situations_of: bit i for chess::Situation i

  // Each column of one value (or 64) a row with its width, and of `other`'s alike: what
  // append_row and keep_first go through (legal and legal_begin, the ragged column, apart).
  template <class F>
  static void for_each_column(CompactPositions& a, const CompactPositions& b, F&& f) {
    f(a.squares, b.squares, 64);
    f(a.side, b.side, 1);
    f(a.castling, b.castling, 1);
    f(a.en_passant, b.en_passant, 1);
    f(a.game, b.game, 1);
    f(a.ply, b.ply, 1);
    f(a.situations, b.situations, 1);
  }

  size_t size() const { return side.size(); }
  encode::BoardState state(size_t r) const;
  // Appends row r of `other`.
  void append_row(const CompactPositions& other, size_t r);
  // Drops every row after the first n (none when there are n or fewer).
  void keep_first(size_t n);
};

// The largest weight of a situation (train's --*-weight and --situation-weight).
inline constexpr int MAX_ROW_WEIGHT = 100;

// How often a row appears in an epoch: the hard and the rare positions more than once, so that
// the net sees them often enough (each copy of a row is placed at random in the epoch). One
// weight per situation (chess/situations.h), 1 by default: a row in several weighted situations
// appears as often as the largest of their weights says.
struct RowWeights {
  std::array<int, chess::SITUATION_NB> weight = [] {
    std::array<int, chess::SITUATION_NB> ones{};
    ones.fill(1);
    return ones;
  }();

  // Raises situation s's weight to w, if w is larger (where two options weight one situation,
  // the larger weight wins).
  RowWeights& raise(chess::Situation s, int w) {
    weight[size_t(s)] = std::max(weight[size_t(s)], w);
    return *this;
  }
  int copies(uint32_t situations) const {
    int n = 1;
    for (int s = 0; s < chess::SITUATION_NB; ++s)
      if (situations & (1u << s)) n = std::max(n, weight[size_t(s)]);
    return n;
  }
  int copies(const CompactPositions& rows, size_t r) const { return copies(rows.situations[r]); }
  bool repeats_any() const {
    return std::any_of(weight.begin(), weight.end(), [](int w) { return w > 1; });
  }
  bool operator==(const RowWeights&) const = default;

  // The weights "NAME=W[,NAME=W...]" give (train --situation-weight; "" gives none): NAME one of
  // chess::SITUATIONS' names, W an integer in 1..MAX_ROW_WEIGHT, each name once. Throws
  // legalnet::Error, one line naming the entry that is wrong (an unknown name: with the names).
  static RowWeights parse(std::string_view text);
};

// Whether a row of ply `ply` is kept under a position ply limit (--position-ply-limit): rows
// with ply < limit, every row when the limit is 0.
inline bool within_ply_limit(int64_t ply, int limit) { return limit == 0 || ply < limit; }

struct LoadOptions {
  int position_ply_limit = 0;  // keep only rows with ply < position_ply_limit (0: all)
  uint64_t max_rows = 0;       // 0: all
  bool quiet = false;
};

// Appends rows [start, start + count) of `reader` to `out`: those within the ply limit whose
// game, numbered from `game_offset`, passes `keep_game` (if given).
// Each row is checked by the one row decoder (data::RowBlock::position), which throws
// legalnet::Error naming the file and row before a bad value is used.
void read_rows(const data::DatasetReader& reader, uint64_t start, uint64_t count, int64_t game_offset,
               int position_ply_limit, const std::function<bool(int64_t game)>& keep_game, CompactPositions& out);

// Reads one or more datasets (a merged file counts as one) into memory, in file order.
CompactPositions load_positions(const std::vector<data::DatasetReader>& readers, const LoadOptions& options);
CompactPositions load_positions(const std::vector<std::string>& paths, const LoadOptions& options);

// Whether a game is held out for validation: a hash of (seed, game) falls below `fraction`.
// Splitting by game, never by position: the positions of one game are correlated.
bool is_validation_game(int64_t game, double fraction, uint64_t seed);

// Splits rows by game with is_validation_game.
void split_by_game(const CompactPositions& all, double fraction, uint64_t seed, CompactPositions& train,
                   CompactPositions& validation);

}  // namespace legalnet::train
