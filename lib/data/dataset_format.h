// The legalnet HDF5 dataset: names, types and shapes in one place (documented in
// docs/dataset.md). Readers refuse a file whose format name or version they do not know.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <type_traits>

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

// The columns as tables that the writer, the reader, merge and the row decoder go through:
// name, element type and the dimensions after the row count (0 ends them). Code names a
// column by its place in the table (RowColumn, GameColumn), never by a member of its own.
enum class Element : uint8_t { INT8, UINT8, INT16, INT32, INT64 };

// The element types: the one table of their names, sizes and signs (HDF5's native types are
// matched to them in data/h5.cpp).
struct ElementTraits {
  const char* name;
  int bytes;
  bool is_signed;
};
inline constexpr ElementTraits ELEMENTS[] = {
    {"int8", 1, true}, {"uint8", 1, false}, {"int16", 2, true}, {"int32", 4, true}, {"int64", 8, true}};
constexpr const ElementTraits& traits(Element e) { return ELEMENTS[size_t(e)]; }

// The element type of a C++ integer type.
template <class T>
constexpr Element element_of() {
  if constexpr (std::is_same_v<T, int8_t>)
    return Element::INT8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return Element::UINT8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return Element::INT16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return Element::INT32;
  else {
    static_assert(std::is_same_v<T, int64_t>, "not an element type of the format");
    return Element::INT64;
  }
}

struct ColumnSpec {
  const char* name;
  Element element;
  std::array<int, 3> tail;
  const char* description;  // the dataset's "description" attribute (docs/dataset.md's tables)
  constexpr int tail_rank() const { return tail[0] ? (tail[1] ? (tail[2] ? 3 : 2) : 1) : 0; }
  constexpr int elements_per_row() const {
    return (tail[0] ? tail[0] : 1) * (tail[1] ? tail[1] : 1) * (tail[2] ? tail[2] : 1);
  }
  constexpr int row_bytes() const { return elements_per_row() * traits(element).bytes; }
};

enum class RowColumn : uint8_t {
  POSITIONS,
  LEGAL_MOVES,
  PLAYED_MOVE,
  PLAYED_PROMOTION,
  GAME,
  PLY,
  CASTLING,
  EN_PASSANT,
  HALFMOVE_CLOCK,
  FULLMOVE_NUMBER,
};
inline constexpr ColumnSpec ROW_COLUMNS[] = {
    {POSITIONS,
     Element::INT8,
     {encode::PLANES, 8, 8},
     "the board planes: the root attributes planes and plane_convention"},
    {LEGAL_MOVES,
     Element::UINT8,
     {encode::MOVE_INDICES},
     "1 at from*64 + to for every legal move (the root attribute move_index)"},
    {PLAYED_MOVE,
     Element::INT16,
     {},
     "index from*64 + to of the move played from this position; -1 for a final position"},
    {PLAYED_PROMOTION, Element::INT8, {}, "0, or the promotion piece of the played move: 2 N, 3 B, 4 R, 5 Q"},
    {GAME, Element::INT64, {}, "the row of this position's game in games/"},
    {PLY, Element::INT32, {}, "plies played in the game before this position"},
    {CASTLING, Element::UINT8, {}, "castling rights: 1 = K, 2 = Q, 4 = k, 8 = q"},
    {EN_PASSANT, Element::INT8, {}, "square (a1 = 0, h8 = 63) of a legal en-passant capture, or -1"},
    {HALFMOVE_CLOCK, Element::INT32, {}, "plies since the last capture or pawn move"},
    {FULLMOVE_NUMBER, Element::INT32, {}, "the FEN fullmove number"},
};
constexpr size_t ROW_COLUMN_COUNT = std::size(ROW_COLUMNS);
constexpr const ColumnSpec& spec(RowColumn c) { return ROW_COLUMNS[size_t(c)]; }

enum class GameColumn : uint8_t { FIRST_ROW, NUM_ROWS, PLIES, SOURCE, SOURCE_NUMBER, SOURCE_LINE, RESULT, TERMINATION };
inline constexpr ColumnSpec GAME_COLUMNS[] = {
    {GAME_FIRST_ROW, Element::INT64, {}, "the game's first row: its rows are first_row .. first_row + num_rows - 1"},
    {GAME_NUM_ROWS, Element::INT32, {}, "the game's rows"},
    {GAME_PLIES, Element::INT32, {}, "moves in the game"},
    {GAME_SOURCE, Element::INT32, {}, "index into the root attribute sources (the input files)"},
    {GAME_SOURCE_NUMBER, Element::INT64, {}, "1-based number of the game in that file"},
    {GAME_SOURCE_LINE, Element::INT64, {}, "line of the game's first tag or move in that file"},
    {GAME_RESULT, Element::INT8, {}, "1 = 1-0, 0 = 1/2-1/2, -1 = 0-1, -2 = * or missing"},
    {GAME_TERMINATION,
     Element::INT8,
     {},
     "how the final position ends the game by the rules (the root attribute termination_codes)"},
};
constexpr size_t GAME_COLUMN_COUNT = std::size(GAME_COLUMNS);
constexpr const ColumnSpec& spec(GameColumn c) { return GAME_COLUMNS[size_t(c)]; }

// The enums name the tables' entries in order.
static_assert(spec(RowColumn::POSITIONS).name == POSITIONS && spec(RowColumn::LEGAL_MOVES).name == LEGAL_MOVES &&
              spec(RowColumn::PLAYED_MOVE).name == PLAYED_MOVE &&
              spec(RowColumn::PLAYED_PROMOTION).name == PLAYED_PROMOTION && spec(RowColumn::GAME).name == GAME &&
              spec(RowColumn::PLY).name == PLY && spec(RowColumn::CASTLING).name == CASTLING &&
              spec(RowColumn::EN_PASSANT).name == EN_PASSANT &&
              spec(RowColumn::HALFMOVE_CLOCK).name == HALFMOVE_CLOCK &&
              spec(RowColumn::FULLMOVE_NUMBER).name == FULLMOVE_NUMBER && ROW_COLUMN_COUNT == 10);
static_assert(spec(GameColumn::FIRST_ROW).name == GAME_FIRST_ROW && spec(GameColumn::NUM_ROWS).name == GAME_NUM_ROWS &&
              spec(GameColumn::PLIES).name == GAME_PLIES && spec(GameColumn::SOURCE).name == GAME_SOURCE &&
              spec(GameColumn::SOURCE_NUMBER).name == GAME_SOURCE_NUMBER &&
              spec(GameColumn::SOURCE_LINE).name == GAME_SOURCE_LINE && spec(GameColumn::RESULT).name == GAME_RESULT &&
              spec(GameColumn::TERMINATION).name == GAME_TERMINATION && GAME_COLUMN_COUNT == 8);

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
