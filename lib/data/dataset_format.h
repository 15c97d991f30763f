// The legalnet HDF5 dataset: names, types and shapes in one place (documented in
// docs/dataset.md). Readers refuse a file whose format name or version they do not know.
#pragma once

#include <array>
#include <cstdint>

#include "encode/encode.h"

namespace legalnet::data {

constexpr const char* FORMAT_NAME = "legalnet-dataset";
constexpr int FORMAT_VERSION = 1;

// One row per position, in game order and then ply order.
constexpr const char* POSITIONS = "positions";                // int8   (N, 7, 8, 8)
constexpr const char* LEGAL_MOVES = "legal_moves";            // uint8  (N, 4096)
constexpr const char* PLAYED_MOVE = "played_move";            // int16  (N,) from*64+to; -1 for a final position
constexpr const char* PLAYED_PROMOTION = "played_promotion";  // int8 (N,) 0, or 2..5 = N, B, R, Q
constexpr const char* GAME = "game";                          // int64  (N,) row in games/
constexpr const char* PLY = "ply";                            // int32  (N,) plies played before this position
constexpr const char* CASTLING = "castling";                  // uint8  (N,) bits 1 K, 2 Q, 4 k, 8 q
constexpr const char* EN_PASSANT = "en_passant";              // int8   (N,) square of a legal e.p. capture, or -1
constexpr const char* HALFMOVE_CLOCK = "halfmove_clock";      // int32  (N,)
constexpr const char* FULLMOVE_NUMBER = "fullmove_number";    // int32  (N,)

// One row per game, in the group "games".
constexpr const char* GAMES_GROUP = "games";
constexpr const char* GAME_FIRST_ROW = "first_row";        // int64 first row of the game's positions
constexpr const char* GAME_NUM_ROWS = "num_rows";          // int32 rows it contributed (after --dedupe)
constexpr const char* GAME_PLIES = "plies";                // int32 moves in the game
constexpr const char* GAME_SOURCE = "source";              // int32 index into the root attribute "sources"
constexpr const char* GAME_SOURCE_NUMBER = "source_game";  // int64 1-based game number in that file
constexpr const char* GAME_SOURCE_LINE = "source_line";    // int64 line of the game's first tag or move
constexpr const char* GAME_RESULT = "result";              // int8  1 white won, 0 draw, -1 black won, -2 unknown (*)
constexpr const char* GAME_TERMINATION = "termination";    // int8  rules-based ending of the final position

// The columns as tables that the writer, the reader and merge go through: name, element type
// and the dimensions after the row count (0 ends them).
enum class Element : uint8_t { INT8, UINT8, INT16, INT32, INT64 };
struct ColumnSpec {
  const char* name;
  Element element;
  std::array<int, 3> tail;
  constexpr int tail_rank() const { return tail[0] ? (tail[1] ? (tail[2] ? 3 : 2) : 1) : 0; }
  constexpr int elements_per_row() const {
    return (tail[0] ? tail[0] : 1) * (tail[1] ? tail[1] : 1) * (tail[2] ? tail[2] : 1);
  }
};

inline constexpr ColumnSpec ROW_COLUMNS[] = {
    {POSITIONS, Element::INT8, {encode::PLANES, 8, 8}},
    {LEGAL_MOVES, Element::UINT8, {encode::MOVE_INDICES}},
    {PLAYED_MOVE, Element::INT16, {}},
    {PLAYED_PROMOTION, Element::INT8, {}},
    {GAME, Element::INT64, {}},
    {PLY, Element::INT32, {}},
    {CASTLING, Element::UINT8, {}},
    {EN_PASSANT, Element::INT8, {}},
    {HALFMOVE_CLOCK, Element::INT32, {}},
    {FULLMOVE_NUMBER, Element::INT32, {}},
};

inline constexpr ColumnSpec GAME_COLUMNS[] = {
    {GAME_FIRST_ROW, Element::INT64, {}},     {GAME_NUM_ROWS, Element::INT32, {}},
    {GAME_PLIES, Element::INT32, {}},         {GAME_SOURCE, Element::INT32, {}},
    {GAME_SOURCE_NUMBER, Element::INT64, {}}, {GAME_SOURCE_LINE, Element::INT64, {}},
    {GAME_RESULT, Element::INT8, {}},         {GAME_TERMINATION, Element::INT8, {}},
};

// Rows per chunk of the two large datasets (measured in docs/benchmarks.md): small enough that
// one chunk of legal_moves (1 MiB raw) fits HDF5's default 1 MiB chunk cache for random reads,
// large enough to compress well and to read sequentially at full speed.
constexpr int ROWS_PER_CHUNK = 256;
// Rows per chunk of the one-dimensional per-row datasets.
constexpr int ROWS_PER_COLUMN_CHUNK = 65536;
// Rows per chunk of the games table's columns.
constexpr int GAMES_PER_CHUNK = 16384;
// The deflate level of every dataset (docs/dataset.md: gzip level 1, behind the shuffle
// filter for elements wider than a byte).
constexpr int DEFLATE_LEVEL = 1;

}  // namespace legalnet::data
