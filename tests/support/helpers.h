// Shared test helpers: external oracles (Stockfish, pgn-extract, Python) and sample positions.
#pragma once

#include <string>
#include <vector>

#include "chess/position.h"
#include "util/error.h"

namespace legalnet::test {

// Runs a shell command with `input` on its stdin and returns its stdout; fails the test
// (throws) when the command cannot run or exits non-zero.
std::string run_command(const std::string& command, const std::string& input = "");

// Paths of the oracles, set by CMake (found at configure time).
std::string stockfish_path();
std::string pgn_extract_path();
std::string python_path();
std::string bin_dir();

// Whether the side to move, not in check, has a piece pinned to its king.
bool has_pinned_piece(const chess::Position& pos);

// Whether the side to move is in check, read from the attack planes' check-line plane (which
// holds at least the checker whenever there is one).
bool side_to_move_in_check(const int8_t* squares, int side);

// Stockfish's "go perft <depth>" for every FEN, run in one Stockfish process: per FEN, the
// divide lines ("e2e4: 1"), sorted, and the total.
struct StockfishPerft {
  std::vector<std::string> moves;
  uint64_t nodes = 0;
};
std::vector<StockfishPerft> stockfish_perft(const std::vector<std::string>& fens, int depth);

// FENs sampled from seeded random games: every position with a legal en-passant capture,
// a promotion, castling, a check or a pin, and every 25th other one, until `count` are collected.
std::vector<std::string> sample_fens(uint64_t seed, size_t count);

// The message of the legalnet::Error that fn() throws, or "no error": the tools promise
// precise messages, so tests check the words, not only the type.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A fresh empty directory under the test temp dir.
std::string temp_dir(const std::string& name);
std::string read_file(const std::string& path);

}  // namespace legalnet::test
