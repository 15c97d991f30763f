#include "data/encoded_rows.h"

#include "encode/encode.h"

namespace legalnet::data {

void EncodedRows::truncate(size_t rows) {
  for (ColumnValues& c : columns)
    if (c.rows() > rows) c.resize(rows);
  legal.resize(rows == 0 ? 0 : legal_end[rows - 1]);
  legal_end.resize(rows);
  key.resize(rows);
}

void EncodedRows::clear() { truncate(0); }

void EncodedRows::add(const chess::Position& pos, const chess::MoveList& legal_moves, chess::Move played,
                      int ply_number) {
  using enum RowColumn;
  encode::encode_planes(pos, reinterpret_cast<int8_t*>(columns[POSITIONS].add_row()));
  // The four promotions of one pawn move share an index: keep it once.
  int last = -1;
  for (chess::Move m : legal_moves) {
    const int index = encode::move_index(m);
    if (m.kind() == chess::MoveKind::PROMOTION && index == last) continue;
    legal.push_back(uint16_t(index));
    last = index;
  }
  legal_end.push_back(uint32_t(legal.size()));
  const bool promotion = !played.is_none() && played.kind() == chess::MoveKind::PROMOTION;
  columns[PLAYED_MOVE].push(played.is_none() ? -1 : encode::move_index(played));
  columns[PLAYED_PROMOTION].push(promotion ? int(played.promotion()) : 0);
  columns[PLY].push(ply_number);
  columns[CASTLING].push(pos.castling_rights());
  columns[EN_PASSANT].push(pos.ep_square() == chess::SQ_NONE ? -1 : int(pos.ep_square()));
  columns[HALFMOVE_CLOCK].push(pos.halfmove_clock());
  columns[FULLMOVE_NUMBER].push(pos.fullmove_number());
  key.push_back(pos.key());
}

}  // namespace legalnet::data
