// Dataset rows held in memory compactly for training and evaluation: 64 signed piece codes
// and the side to move per position (65 bytes instead of 448), legal moves as index lists
// (about 60 bytes instead of 4096). Batches expand them to planes and masks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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
  std::vector<uint8_t> in_check;  // the side to move is in check
  std::vector<uint8_t> rare;      // a castling or en-passant move is legal (a few per thousand rows)
  std::vector<uint8_t> pinned;    // a piece of the side to move is pinned to its king (chess::KingSafety)

  size_t size() const { return side.size(); }
  encode::BoardState state(size_t r) const;
  // The network inputs of row r into out[input_spec(kind).planes * 64] (encode::write_inputs).
  void expand_inputs(size_t r, encode::InputKind kind, float* out) const;
  // The legal-move target of row r into out[4096], in the network's frame (encode::write_targets).
  void expand_targets(size_t r, encode::InputKind kind, float* out) const;
  // Appends row r of `other`.
  void append_row(const CompactPositions& other, size_t r);
  // Drops every row after the first n (none when there are n or fewer).
  void keep_first(size_t n);
};

// How often a row appears in an epoch: the hard and the rare positions more than once, so that
// the net sees them often enough (each copy of a row is placed at random in the epoch).
// A row that is several of these appears as often as the largest weight says.
struct RowWeights {
  int check = 1;  // rows whose side to move is in check (--check-weight)
  int rare = 1;   // rows with a legal castling or en-passant move (--rare-weight)
  int pin = 1;    // rows where a piece of the side to move is pinned to its king (--pin-weight)
  int copies(const CompactPositions& rows, size_t r) const {
    return std::max({1, rows.in_check[r] ? check : 1, rows.rare[r] ? rare : 1, rows.pinned[r] ? pin : 1});
  }
  bool repeats_any() const { return check > 1 || rare > 1 || pin > 1; }
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
CompactPositions load_positions(const std::vector<std::string>& paths, const LoadOptions& options);

// Whether a game is held out for validation: a hash of (seed, game) falls below `fraction`.
// Splitting by game, never by position: the positions of one game are correlated.
bool is_validation_game(int64_t game, double fraction, uint64_t seed);

// Splits rows by game with is_validation_game.
void split_by_game(const CompactPositions& all, double fraction, uint64_t seed, CompactPositions& train,
                   CompactPositions& validation);

}  // namespace legalnet::train
