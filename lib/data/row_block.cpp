#include "data/row_block.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>

#include "encode/encode.h"
#include "util/error.h"

namespace legalnet::data {

chess::Position RowBlock::position(size_t i) const {
  const auto bad_row = [&](const std::string& what) {
    return Error(fmt::format("{}: row {}: {}", path, start + i, what));
  };
  const int8_t* p = planes_of(i);
  for (int k = 0; k < encode::POSITION_SIZE; ++k)
    if (p[k] < -1 || p[k] > 1)
      throw bad_row(fmt::format("positions[{}][{}][{}] is {}, not -1, 0 or +1", k / 64, k / 8 % 8, k % 8, p[k]));
  const int64_t castling = at(RowColumn::CASTLING, i), en_passant = at(RowColumn::EN_PASSANT, i);
  if (castling < 0 || castling > 15) throw bad_row(fmt::format("castling is {}, not 0..15", castling));
  if (en_passant < -1 || en_passant > 63) throw bad_row(fmt::format("en_passant is {}, not -1..63", en_passant));
  const auto counter = [&](RowColumn c) { return int(std::clamp<int64_t>(at(c, i), INT32_MIN, INT32_MAX)); };
  try {
    return encode::decode_position(p, uint8_t(castling), int(en_passant), counter(RowColumn::HALFMOVE_CLOCK),
                                   counter(RowColumn::FULLMOVE_NUMBER));
  } catch (const Error& e) {
    throw bad_row(std::string("not a position: ") + e.what());
  }
}

}  // namespace legalnet::data
