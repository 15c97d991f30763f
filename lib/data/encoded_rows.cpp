#include "data/encoded_rows.h"

#include "encode/encode.h"

namespace legalnet::data {

void EncodedRows::truncate(size_t rows) {
  planes.resize(rows * encode::POSITION_SIZE);
  legal.resize(rows == 0 ? 0 : legal_end[rows - 1]);
  legal_end.resize(rows);
  played_move.resize(rows);
  played_promotion.resize(rows);
  ply.resize(rows);
  castling.resize(rows);
  en_passant.resize(rows);
  halfmove_clock.resize(rows);
  fullmove_number.resize(rows);
  key.resize(rows);
}

void EncodedRows::clear() { truncate(0); }

void EncodedRows::add(const chess::Position& pos, const chess::MoveList& legal_moves, chess::Move played,
                      int ply_number) {
  const size_t at = planes.size();
  planes.resize(at + encode::POSITION_SIZE);
  encode::encode_planes(pos, planes.data() + at);
  // The four promotions of one pawn move share an index: keep it once.
  int last = -1;
  for (chess::Move m : legal_moves) {
    const int index = encode::move_index(m);
    if (m.kind() == chess::MoveKind::PROMOTION && index == last) continue;
    legal.push_back(uint16_t(index));
    last = index;
  }
  legal_end.push_back(uint32_t(legal.size()));
  played_move.push_back(played.is_none() ? int16_t(-1) : int16_t(encode::move_index(played)));
  played_promotion.push_back(
      played.kind() == chess::MoveKind::PROMOTION && !played.is_none() ? int8_t(played.promotion()) : int8_t(0));
  ply.push_back(ply_number);
  castling.push_back(pos.castling_rights());
  en_passant.push_back(pos.ep_square() == chess::SQ_NONE ? int8_t(-1) : int8_t(pos.ep_square()));
  halfmove_clock.push_back(pos.halfmove_clock());
  fullmove_number.push_back(pos.fullmove_number());
  key.push_back(pos.key());
}

}  // namespace legalnet::data
