// The UCI protocol (Universal Chess Interface, as GUIs, cutechess, fastchess and python-chess's
// chess.engine speak it) around a net that answers at once: no search, the net's output is the
// move. The net is behind eval::Predictor, so this needs no torch (and tests can fake a net).
// docs/uci.md describes the commands, the options and the limits below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "eval/games.h"

namespace legalnet::eval {

// The longest line read (1 MiB: a game of 20,000 plies is about 110 KB); a longer one is
// discarded whole, with an info string, and never executed cut short.
constexpr size_t UCI_MAX_LINE = size_t(1) << 20;
// The most moves a `position` command may play from its start: more than the longest game the
// 75-move rule allows (about 17,700 plies).
constexpr int UCI_MAX_MOVES = 20000;
// The most bytes of a client's text quoted back in an info string (escaped by printable()).
constexpr size_t UCI_QUOTE_BYTES = 60;
// The net's most probable moves an info string lists at each `go`.
constexpr int UCI_TOP_MOVES = 5;

// How `go` turns the net's 4096 outputs into the move it plays.
enum class UciPolicy : uint8_t {
  LEGAL,   // the most probable legal move
  RAW,     // the most probable of all 4096 outputs, legal or not: the client referees the net
  SAMPLE,  // drawn from all outputs as evaluate's games draw; an illegal draw is drawn again
           // among the legal moves
};

struct UciEngine {
  std::string name;                              // after "id name"
  std::string model;                             // what the net is, for an info string after uciok
  Predictor predict;                             // fills 4096 probabilities (board order) for one position
  std::function<void(int threads)> set_threads;  // the Threads option (torch's intra-op threads)
  int threads = 1;                               // the Threads option's default
  uint64_t seed = 0;                             // the Seed option's default (at most UCI_MAX_SEED)
};
constexpr uint64_t UCI_MAX_SEED = 2147483647;  // a spin option's value is a 32-bit int to some GUIs
constexpr int UCI_MAX_THREADS = 1024;

// Reads commands from `in` until `quit` or the end of input and answers on `out`, one line at a
// time, each flushed. Unknown and malformed input is answered with an info string and ignored;
// nothing a client sends ends the loop but `quit` and the end of input.
void run_uci(std::istream& in, std::ostream& out, const UciEngine& engine);

}  // namespace legalnet::eval
