// Move notation: UCI (e2e4, e7e8q, e1g1) and SAN (Nf3, exd5, O-O, e8=Q+).
#pragma once

#include <string>
#include <string_view>

#include "chess/movegen.h"

namespace legalnet::chess {

// UCI long algebraic notation; castling is the king's move (e1g1).
std::string to_uci(Move m);
// A legal move of pos from UCI text ("e2e4", "e7e8q"; castling as "e1g1" or, as UCI_Chess960
// writes it, the king taking its rook: "e1h1"); throws legalnet::Error otherwise.
Move parse_uci(const Position& pos, std::string_view text);

// Appends the SAN of a legal move without its check suffix; `legal` holds the legal moves of
// pos, used for disambiguation. Callers that play the move anyway add '+' or '#' themselves.
void append_san_body(const Position& pos, Move m, const MoveList& legal, std::string& out);
// The full SAN of a legal move, with '+' or '#'. pos is restored before returning.
std::string to_san(Position& pos, Move m);

// Parses SAN and returns the legal move it names. Lenient as real PGN requires: accepts
// 0-0 for O-O, e8Q and e8(Q) for e8=Q, a missing or wrong '+'/'#'/'x', trailing !? marks, an
// "e.p." suffix, long algebraic (Ng1-f3, e2-e4, Pe2e4) and UCI in movetext (g1f3, e1g1, d7d8r).
// Throws legalnet::Error for an unparseable, illegal or ambiguous move, saying which.
Move parse_san(const Position& pos, std::string_view text);
Move parse_san(const Position& pos, std::string_view text, const MoveList& legal);

// What a reader of FENs says when Position's constructor dropped void castling rights (the king
// or rook is not on its square; python-chess reads them the same way): "castling rights 'Q'
// dropped (the king or rook is not on its square)", without the caller's prefix.
std::string castling_dropped_note(std::string_view dropped);

}  // namespace legalnet::chess
