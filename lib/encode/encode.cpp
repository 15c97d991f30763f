#include "encode/encode.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "util/error.h"

namespace legalnet::encode {

void encode_planes(const chess::Position& pos, int8_t* out) {
  std::memset(out + PLANE_SIZE, 0, (PLANES - 1) * PLANE_SIZE);
  std::memset(out, pos.side_to_move() == chess::WHITE ? 1 : -1, PLANE_SIZE);
  for (chess::Bitboard b = pos.pieces(); b;) {
    const chess::Square s = chess::pop_lsb(b);
    const chess::Piece p = pos.piece_on(s);
    out[chess::type_of(p) * PLANE_SIZE + s] = chess::color_of(p) == chess::WHITE ? 1 : -1;
  }
}

bool exact_set(const float* probs, const LegalMask& legal, float threshold) {
  for (int i = 0; i < MOVE_INDICES; ++i)
    if ((probs[i] >= threshold) != legal[i]) return false;
  return true;
}

double legal_share(const float* probs, const LegalMask& legal) {
  double all = 0, on_legal = 0;
  for (int i = 0; i < MOVE_INDICES; ++i) {
    all += probs[i];
    if (legal[i]) on_legal += probs[i];
  }
  return all > 0 ? on_legal / all : 0.0;
}

std::vector<int> top_indices(const float* probs, int k) {
  k = std::clamp(k, 1, MOVE_INDICES);
  std::vector<int> order(MOVE_INDICES);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return probs[a] > probs[b]; });
  order.resize(size_t(k));
  return order;
}

void encode_legal_mask(const chess::MoveList& legal, uint8_t* out) {
  std::memset(out, 0, MOVE_INDICES);
  for (chess::Move m : legal) out[move_index(m)] = 1;
}

bool index_is_geometric(int index) {
  const int from = index / 64, to = index % 64;
  if (from == to) return false;
  const int df = std::abs(to % 8 - from % 8), dr = std::abs(to / 8 - from / 8);
  return df == 0 || dr == 0 || df == dr || (df == 1 && dr == 2) || (df == 2 && dr == 1);
}

namespace {
constexpr int DIRECTIONS[8][2] = {{0, 1}, {1, 1}, {1, 0}, {1, -1}, {0, -1}, {-1, -1}, {-1, 0}, {-1, 1}};
constexpr int KNIGHT_JUMPS[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
}  // namespace

int move_type_of(int index) {
  const int from = index / 64, to = index % 64;
  const int df = to % 8 - from % 8, dr = to / 8 - from / 8;
  for (int d = 0; d < 8; ++d)
    for (int k = 1; k <= 7; ++k)
      if (DIRECTIONS[d][0] * k == df && DIRECTIONS[d][1] * k == dr) return d * 7 + (k - 1);
  for (int j = 0; j < 8; ++j)
    if (KNIGHT_JUMPS[j][0] == df && KNIGHT_JUMPS[j][1] == dr) return 56 + j;
  return -1;
}

chess::Position decode_position(const int8_t* planes, uint8_t castling, int en_passant, int halfmove_clock,
                                int fullmove_number) {
  // The board straight from the planes; chess::Position::from_parts checks the rest with the
  // FEN parser's checks and messages.
  std::array<chess::Piece, chess::SQUARE_NB> board{};
  for (int sq = 0; sq < chess::SQUARE_NB; ++sq) {
    for (int pt = chess::PAWN; pt <= chess::KING; ++pt) {
      const int8_t v = planes[pt * PLANE_SIZE + sq];
      if (v == 0) continue;
      if (board[size_t(sq)] != chess::NO_PIECE)
        throw Error("two pieces on square " + chess::square_name(chess::Square(sq)));
      if (v != 1 && v != -1) throw Error("plane value " + std::to_string(v) + " is not -1, 0 or +1");
      board[size_t(sq)] = chess::make_piece(v > 0 ? chess::WHITE : chess::BLACK, chess::PieceType(pt));
    }
  }
  const chess::Square ep = en_passant >= 0 && en_passant < 64 ? chess::Square(en_passant) : chess::SQ_NONE;
  return chess::Position::from_parts(board, planes[0] > 0 ? chess::WHITE : chess::BLACK, castling, ep, halfmove_clock,
                                     fullmove_number);
}

void square_codes(const int8_t* planes, int8_t* squares) {
  for (int s = 0; s < 64; ++s) {
    int8_t code = 0;
    for (int t = 1; t < PLANES; ++t)
      if (planes[t * PLANE_SIZE + s]) code = int8_t(planes[t * PLANE_SIZE + s] * t);
    squares[s] = code;
  }
}

}  // namespace legalnet::encode
