// The board: piece placement, side to move, castling, en passant, counters and the Zobrist key,
// with FEN input/output and make/unmake of moves.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "chess/bitboard.h"
#include "chess/types.h"

namespace legalnet::chess {

constexpr std::string_view START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

// The pieces of one side that must once have been pawns: those beyond a first queen, two rooks,
// two bishops and two knights. Material a game can reach holds at most 8 minus its pawns of them
// (Position's checks refuse more; the generators of games/ draw within it).
constexpr int promoted_pieces(int knights, int bishops, int rooks, int queens) {
  return std::max(knights - 2, 0) + std::max(bishops - 2, 0) + std::max(rooks - 2, 0) + std::max(queens - 1, 0);
}

// "e4" for SQ_E4.
std::string square_name(Square s);

// What undo_move cannot recompute, one entry per ply played since the position was set.
struct StateInfo {
  uint64_t key;       // Zobrist key of the position (see Position::key)
  Bitboard checkers;  // pieces giving check to the side to move
  Square ep_square;   // SQ_NONE unless an en-passant capture is legal
  uint8_t castling;   // CastlingRights bits
  uint32_t rule50;    // halfmove clock (a FEN's, up to 999999, plus the plies since: kept exactly)
  Piece captured;     // piece taken by the move that led here
};

class Position {
 public:
  // The standard start position.
  Position();
  // Parses a FEN; throws legalnet::Error naming the field at fault (see position.cpp).
  explicit Position(std::string_view fen);
  // The same, but castling rights whose king or rook has left its square are dropped, as
  // python-chess and chessops read them (FEN tags of studies carry such void rights); their
  // letters are appended to *dropped.
  Position(std::string_view fen, std::string* dropped);

  // A position from its parts, checked as a FEN is, with the same messages (each names the
  // field of the FEN these parts would make): board[s] the piece on square s, the castling
  // rights (CastlingRights bits), the en-passant square (SQ_NONE for none) and the counters
  // (not negative). How a dataset row becomes a position, without FEN text.
  static Position from_parts(const std::array<Piece, SQUARE_NB>& board, Color side, uint8_t castling, Square ep,
                             int halfmove_clock, int fullmove_number);

  // FEN output. The en-passant field is set only when an en-passant capture is legal,
  // as python-chess and Stockfish write it.
  std::string fen() const;

  // Board queries
  Piece piece_on(Square s) const { return board_[s]; }
  Bitboard pieces() const { return by_color_[WHITE] | by_color_[BLACK]; }
  Bitboard pieces(Color c) const { return by_color_[c]; }
  Bitboard pieces(PieceType pt) const { return by_type_[pt]; }
  Bitboard pieces(PieceType a, PieceType b) const { return by_type_[a] | by_type_[b]; }
  Bitboard pieces(Color c, PieceType pt) const { return by_color_[c] & by_type_[pt]; }
  Bitboard pieces(Color c, PieceType a, PieceType b) const { return by_color_[c] & (by_type_[a] | by_type_[b]); }
  Square king_square(Color c) const { return lsb(pieces(c, KING)); }

  // State queries
  Color side_to_move() const { return side_; }
  uint8_t castling_rights() const { return st().castling; }
  Square ep_square() const { return st().ep_square; }
  int halfmove_clock() const { return int(st().rule50); }
  int fullmove_number() const { return 1 + game_ply_ / 2; }
  Bitboard checkers() const { return st().checkers; }
  bool in_check() const { return st().checkers != 0; }
  // Zobrist key of placement, side to move, castling rights and the en-passant square (only
  // when a capture there is legal): equal keys mean a repetition under FIDE and python-chess.
  uint64_t key() const { return st().key; }
  // Keys of the positions before this one since the position was set, oldest first.
  const std::vector<StateInfo>& history() const { return states_; }

  // Attacks
  Bitboard attackers_to(Square s, Bitboard occupied) const;
  bool attacked_by(Color c, Square s) const { return attackers_to(s, pieces()) & pieces(c); }

  // Doing and undoing moves. The move must be legal in this position.
  void do_move(Move m);
  void undo_move(Move m);

  // The piece type a move moves (the king for castling).
  PieceType moved_piece_type(Move m) const { return type_of(board_[m.from()]); }
  bool is_capture(Move m) const { return board_[m.to()] != NO_PIECE || m.kind() == MoveKind::EN_PASSANT; }

 private:
  const StateInfo& st() const { return states_.back(); }
  void put_piece(Piece p, Square s);
  void remove_piece(Square s);
  void move_piece(Square from, Square to);
  // Setting up (position_setup.cpp): an empty board, the checks FEN input and from_parts
  // share, in the order FEN's fields come.
  struct Empty {};
  explicit Position(Empty);
  void set_fen(std::string_view fen, std::string* dropped_castling);
  void clear_board();
  void check_placement() const;              // one king each, no pawn on the first or last rank, reachable material
  bool castling_right_holds(int bit) const;  // the king and the rook of CastlingRights bit `bit` at home
  void check_ep_square(Square ep) const;     // behind a pawn of the side not to move that just double-pushed
  void finish_setup(uint8_t castling, Square ep, int rule50, int fullmove);
  // The en-passant target after a double push to `to` by the side not to move, if a capture
  // there is legal; SQ_NONE otherwise.
  Square legal_ep_target(Square to) const;
  uint64_t compute_key() const;

  Piece board_[SQUARE_NB];
  Bitboard by_type_[PIECE_TYPE_NB];
  Bitboard by_color_[COLOR_NB];
  Color side_ = WHITE;
  int game_ply_ = 0;  // plies since the start of the game, from the FEN's fullmove number
  std::vector<StateInfo> states_;
};

// The placement field of a FEN (rank 8 first, a digit for each run of empty squares) from
// letter_at(square), a piece letter or '\0' for an empty square: the one FEN board writer
// (Position::fen and the random placements of games/placement.cpp).
template <class LetterAt>
std::string fen_placement(LetterAt letter_at) {
  std::string s;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const char c = letter_at(make_square(file, rank));
      if (!c) {
        ++empty;
        continue;
      }
      if (empty) s += char('0' + empty);
      empty = 0;
      s += c;
    }
    if (empty) s += char('0' + empty);
    if (rank) s += '/';
  }
  return s;
}

namespace zobrist {
extern uint64_t psq[PIECE_NB][SQUARE_NB];
extern uint64_t ep_file[8];
extern uint64_t castling[16];
extern uint64_t side;
}  // namespace zobrist

}  // namespace legalnet::chess
