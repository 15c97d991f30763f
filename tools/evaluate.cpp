// evaluate: how well has a model learned the rules? Metrics on a dataset, games, pictures.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "run/evaluate.h"
#include "run/uci.h"
#include "util/process.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  ensure_passive_openmp(argv);
  CLI::App app{
      "evaluate: measures a model written by train on a held-out dataset (BCE, precision/recall/F1, exact sets,\n"
      "errors by kind of move and position) and in games against a random mover or itself (plies before\n"
      "the first illegal move, counted as the predecessor did). Prints a table; --report writes JSON."};
  cli::set_version(app, "evaluate");
  run::EvaluateOptions o;
  app.add_option("--model", o.model, "Model file (runs/NAME/model.safetensors)")->required();
  app.add_option("--data", o.data, "Held-out dataset(s)");
  app.add_option("--positions", o.positions,
                 "FEN/EPD list(s), one position a line (gen_moves positions): a report card by situation on each");
  app.add_option("--max-positions", o.max_positions, "Positions evaluated (0: all)")
      ->check(cli::in_range(0, cli::MAX_COUNT))
      ->capture_default_str();
  app.add_option("--threshold", o.threshold, "Probability above which a move counts as predicted")
      ->check(cli::in_range(0, 1))
      ->capture_default_str();
  app.add_option("--games", o.games, "Games to play")->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_option("--opponent", o.opponent, "random | self")
      ->check(CLI::IsMember({"random", "self"}))
      ->capture_default_str();
  app.add_flag("--greedy", o.greedy, "Play the highest-scoring move instead of sampling");
  app.add_flag("!--stop-at-illegal", o.resample_illegal,
               "End a game at the model's first illegal pick (default: resample among legal moves and go on)");
  app.add_option("--max-plies", o.max_plies, "Cut games after this many plies (0: play to the end)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--seed", o.seed, "Seed of colours, the random mover and sampling")->capture_default_str();
  app.add_option("--report", o.report, "Write every figure as JSON to this file");
  app.add_option("--fen", o.fen, "Show the model's view of this position ('startpos' allowed)");
  app.add_option("--top-k", o.top_k, "Moves listed (and drawn) for --fen")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--picture", o.picture, "Draw --fen with arrows and heat maps (.svg, or .png via rsvg-convert)");
  app.add_option("--gallery", o.gallery,
                 "Folder for boards of the model's mistakes: the held-out positions with the most illegal mass, "
                 "and the illegal picks in games by reason (one .svg a group; the FENs are in the report)");
  cli::add_device_options(app, {&o.device, &o.compute_precision, &o.threads});
  app.add_option("--batch-size", o.batch_size, "Inference batch (also games played at once)")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_flag("--quiet,-q", o.quiet, "No progress line");
  app.add_flag("--uci", o.uci,
               "Be a UCI engine on stdin and stdout (for GUIs, cutechess, fastchess, python-chess; docs/uci.md); "
               "--seed is the Seed option's default, --threads 0 means 1");
  if (const int status = cli::parse(app, argc, argv, "evaluate"); status >= 0) return status;
  o.command_line = command_line(argc, argv);
  return report_errors("evaluate", [&] {
    if (o.uci) return run::run_uci(o);
    run::run_evaluate(o);
    return 0;
  });
}
