// libFuzzer target: any byte string, read two ways, either sets up a position that round-trips
// and generates moves, or throws legalnet::Error; never a crash or a sanitizer report.
//  1. as FEN text;
//  2. as a board of parts, as a dataset row gives one (Position::from_parts): a byte a square
//     (its low four bits a piece code or empty), then side, castling and en passant. This reading
//     reaches crowded boards (a queen on most squares) that text rarely does: the move list must
//     hold every move of whatever the setup accepts.
#include <array>
#include <string>

#include "chess/movegen.h"
#include "util/error.h"

namespace {

using namespace legalnet;

void play_every_move(chess::Position& pos) {
  const std::string fen = pos.fen();
  if (chess::Position(fen).fen() != fen) __builtin_trap();
  for (chess::Move m : chess::MoveList(pos)) {
    pos.do_move(m);
    (void)chess::MoveList(pos).size();  // the replies too: a move can free more squares
    pos.undo_move(m);
  }
}

chess::Piece piece_of(uint8_t byte) {
  const int code = byte & 15;
  const bool real =
      (code >= chess::W_PAWN && code <= chess::W_KING) || (code >= chess::B_PAWN && code <= chess::B_KING);
  return real ? chess::Piece(code) : chess::NO_PIECE;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    chess::Position pos(std::string_view(reinterpret_cast<const char*>(data), size));
    play_every_move(pos);
  } catch (const Error&) {
  }
  if (size < chess::SQUARE_NB + 3) return 0;
  try {
    std::array<chess::Piece, chess::SQUARE_NB> board{};
    for (int s = 0; s < chess::SQUARE_NB; ++s) board[size_t(s)] = piece_of(data[s]);
    const uint8_t* tail = data + chess::SQUARE_NB;
    const auto ep = tail[2] < chess::SQUARE_NB ? chess::Square(tail[2]) : chess::SQ_NONE;
    chess::Position pos =
        chess::Position::from_parts(board, tail[0] & 1 ? chess::BLACK : chess::WHITE, uint8_t(tail[1] & 15), ep, 0, 1);
    play_every_move(pos);
  } catch (const Error&) {
  }
  return 0;
}
