// gen_moves: random legal games as PGN, and perft for checking the move generator.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "chess/notation.h"
#include "chess/perft.h"
#include "cli_options.h"
#include "run/gen_moves.h"
#include "run/gen_positions.h"
#include "util/console.h"
#include "util/tool_main.h"

namespace {

int run_perft(const std::string& fen, int depth) {
  using namespace legalnet::chess;
  std::string dropped;  // void castling rights are dropped, as python-chess and Stockfish read them
  Position pos(fen == "startpos" ? START_FEN : std::string_view(fen), &dropped);
  if (!dropped.empty())
    legalnet::say("gen_moves: note: castling rights '{}' dropped (the king or rook is not on its square)\n", dropped);
  uint64_t total = 0;
  for (const auto& [move, nodes] : perft_divide(pos, depth)) {
    fmt::print("{}: {}\n", to_uci(move), nodes);
    total += nodes;
  }
  fmt::print("\nNodes searched: {}\n", total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{
      "gen_moves: plays random legal chess games (each move uniform among the legal moves) and writes them as PGN.\n"
      "Games end by python-chess's is_game_over() rules. The same --seed gives byte-identical output for any\n"
      "--threads; shard K of M holds the contiguous block of games [K*N/M, (K+1)*N/M)."};
  legalnet::cli::set_version(app, "gen_moves");

  run::GenMovesOptions opt;
  app.add_option("--games,-n", opt.games, "Number of games in the whole run")
      ->check(cli::in_range(0, cli::MAX_COUNT))
      ->capture_default_str();
  app.add_option("--seed,-s", opt.seed, "Random seed")->capture_default_str();
  app.add_option("--out,-o", opt.out, "Output PGN ('-' for stdout; .gz or .zst compress)")->capture_default_str();
  cli::add_threads_option(app, opt.threads, "Worker threads");
  app.add_option("--start", opt.start,
                 "Where games start: random (the standard position, or --start-fen), placement (a random legal "
                 "placement of material per game: castling and en-passant rights where it allows them), or a "
                 "FEN/EPD list, one a line (game i from line i mod N; name a file called 'placement' ./placement)")
      ->capture_default_str();
  app.add_option("--start-fen", opt.start_fen, "Start every game from this FEN instead of the start position");
  app.add_option("--max-plies", opt.max_plies, "Stop a game after this many plies (Result '*'); 0: no limit")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  auto* shard = app.add_option("--shard", opt.shard,
                               "Make only shard K (0-based) of --num-shards; default from "
                               "SLURM_ARRAY_TASK_ID when SLURM_ARRAY_TASK_COUNT is set");
  app.add_option("--num-shards", opt.num_shards, "Number of shards")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--quiet,-q", opt.quiet, "No progress line and no summary");
  auto* report = app.add_option("--report", opt.report, "Also write the summary as JSON to this file");
  cli::deprecate(app.add_option("--stats-json", opt.report), "gen_moves", report);

  std::string fen = "startpos";
  int depth = 1;
  auto* perft_cmd =
      app.add_subcommand("perft", "Count the leaves of the legal move tree, in Stockfish's 'go perft' format");
  perft_cmd->add_option("--fen", fen, "Position as FEN, or 'startpos'")->capture_default_str();
  perft_cmd->add_option("--depth", depth, "Depth in plies")->required()->check(CLI::Range(1, 20));

  run::GenPositionsOptions positions;
  auto* positions_cmd = app.add_subcommand(
      "positions", "Write a set of positions as a FEN list, to measure a model on (evaluate --positions)");
  positions_cmd
      ->add_option("--start", positions.start,
                   "placement (random legal placements), perft (the move generator's perft suite) or a FEN/EPD list")
      ->capture_default_str();
  positions_cmd->add_option("--count", positions.count, "Placements to draw (--start placement)")
      ->check(cli::in_range(0, cli::MAX_COUNT));
  positions_cmd->add_option("--depth", positions.depth, "Add every position up to this many plies below each start")
      ->check(CLI::Range(0, 4))
      ->capture_default_str();
  positions_cmd->add_option("--seed", positions.seed, "Random seed (--start placement)")->capture_default_str();
  positions_cmd->add_option("--out,-o", positions.out, "Output FEN list ('-' for stdout; .gz or .zst compress)")
      ->capture_default_str();

  if (const int status = legalnet::cli::parse(app, argc, argv, "gen_moves"); status >= 0) return status;
  return report_errors("gen_moves", [&] {
    if (*perft_cmd) return run_perft(fen, depth);
    if (*positions_cmd) {
      run::run_gen_positions(positions);
      return 0;
    }
    apply_slurm_array_shard(opt, shard->count() > 0);
    opt.command_line = command_line(argc, argv);
    run::run_gen_moves(opt);
    return 0;
  });
}
