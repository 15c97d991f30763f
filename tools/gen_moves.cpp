// gen_moves: random legal games as PGN, and perft for checking the move generator.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "chess/notation.h"
#include "chess/perft.h"
#include "util/error.h"
#include "util/version.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{"gen_moves: plays random legal chess games and writes them as PGN"};
  app.set_version_flag("--version", std::string("gen_moves ") + VERSION + " (" + GIT_DESCRIBE + ")");

  std::string fen = "startpos";
  int depth = 1;
  auto* perft_cmd =
      app.add_subcommand("perft", "Count leaf nodes of the legal move tree (Stockfish 'go perft' format)");
  perft_cmd->add_option("--fen", fen, "Position as FEN, or 'startpos'")->capture_default_str();
  perft_cmd->add_option("--depth", depth, "Depth in plies")->required()->check(CLI::Range(1, 20));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*perft_cmd) {
      chess::Position pos(fen == "startpos" ? chess::START_FEN : std::string_view(fen));
      uint64_t total = 0;
      for (const auto& [move, nodes] : chess::perft_divide(pos, depth)) {
        fmt::print("{}: {}\n", chess::to_uci(move), nodes);
        total += nodes;
      }
      fmt::print("\nNodes searched: {}\n", total);
      return 0;
    }
  } catch (const Error& e) {
    fmt::print(stderr, "gen_moves: {}\n", e.what());
    return 1;
  }
  return 0;
}
