#include "run/gen_moves/perft.h"

#include <fmt/core.h>

#include <string>

#include "chess/notation.h"
#include "chess/perft.h"
#include "util/console.h"

namespace legalnet::run {

uint64_t run_perft(const PerftOptions& o) {
  check_perft_options(o);
  std::string dropped;  // void castling rights are dropped, as python-chess and Stockfish read them
  chess::Position pos(o.fen == "startpos" ? chess::START_FEN : std::string_view(o.fen), &dropped);
  if (!dropped.empty()) say("gen_moves: note: {}\n", chess::castling_dropped_note(dropped));
  uint64_t total = 0;
  for (const auto& [move, nodes] : chess::perft_divide(pos, o.depth)) {
    fmt::print("{}: {}\n", chess::to_uci(move), nodes);
    total += nodes;
  }
  fmt::print("\nNodes searched: {}\n", total);
  return total;
}

}  // namespace legalnet::run
