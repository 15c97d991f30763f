// gen_moves: random legal games as PGN, and perft for checking the move generator.
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "run/gen_moves/gen_moves.h"
#include "run/gen_moves/perft.h"
#include "run/gen_moves/positions.h"
#include "util/option_cli.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{run::GEN_MOVES_ABOUT};
  cli::set_version(app, "gen_moves");
  run::GenMovesOptions opt;
  run::gen_moves_options().add_to(app, opt);
  cli::add_config(app, "gen_moves");  // the games' options; not perft's or positions'
  run::PerftOptions perft;
  auto* perft_cmd = app.add_subcommand("perft", run::PERFT_ABOUT);
  run::perft_options().add_to(*perft_cmd, perft);
  run::GenPositionsOptions positions;
  auto* positions_cmd = app.add_subcommand("positions", run::GEN_POSITIONS_ABOUT);
  run::gen_positions_options().add_to(*positions_cmd, positions);

  if (const int status = cli::parse(app, argc, argv, "gen_moves"); status >= 0) return status;
  return report_errors("gen_moves", [&] {
    if (*perft_cmd) {
      run::run_perft(perft);
    } else if (*positions_cmd) {
      run::run_gen_positions(positions);
    } else {
      run::apply_slurm_array_shard(opt, app.count("--shard") > 0);
      opt.command_line = command_line(argc, argv);
      run::run_gen_moves(opt);
    }
    return 0;
  });
}
