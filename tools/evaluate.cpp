// evaluate: how well has a model learned the rules? Metrics on a dataset, games, pictures.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "nn/device.h"
#include "nn/evaluator.h"
#include "util/tool_main.h"
#include "util/version.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  nn::ensure_passive_openmp(argv);
  CLI::App app{
      "evaluate: measures a model written by train on a held-out dataset (BCE, precision/recall/F1, exact sets,\n"
      "errors by kind of move and position) and in games against a random mover or itself (plies before\n"
      "the first illegal move, counted as the predecessor did). Prints a table; --report writes JSON."};
  app.set_version_flag("--version", std::string("evaluate ") + VERSION + " (" + GIT_DESCRIBE + ")");
  nn::EvaluateOptions o;
  app.add_option("--model", o.model, "Model file (runs/NAME/model.pt)")->required();
  app.add_option("--data", o.data, "Held-out dataset(s)");
  app.add_option("--max-positions", o.max_positions, "Positions evaluated (0: all)")->capture_default_str();
  app.add_option("--threshold", o.threshold, "Probability above which a move counts as predicted")
      ->capture_default_str();
  app.add_option("--games", o.games, "Games to play")->capture_default_str();
  app.add_option("--opponent", o.opponent, "random | self")->capture_default_str();
  app.add_flag("--greedy", o.greedy, "Play the highest-scoring move instead of sampling");
  app.add_flag("!--stop-at-illegal", o.resample_illegal,
               "End a game at the model's first illegal pick (default: resample among legal moves and go on)");
  app.add_option("--max-plies", o.max_plies, "Cut games after this many plies (0: play to the end)");
  app.add_option("--seed", o.seed, "Seed of colours, the random mover and sampling")->capture_default_str();
  app.add_option("--report", o.report, "Write every figure as JSON to this file");
  app.add_option("--fen", o.fen, "Show the model's view of this position ('startpos' allowed)");
  app.add_option("--top-k", o.top_k, "Moves listed (and drawn) for --fen")->capture_default_str();
  app.add_option("--picture", o.picture, "Draw --fen with arrows and heat maps (.svg, or .png via rsvg-convert)");
  app.add_option("--device", o.device, "auto | cpu | cuda | cuda:N")->capture_default_str();
  app.add_option("--precision", o.precision,
                 "Inference arithmetic; auto: bf16 on CUDA and on CPUs with AVX-512 BF16 or AMX, else fp32 (any "
                 "model, whatever it was trained in)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads (0: all cores)")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "Inference batch (also games played at once)")->capture_default_str();
  app.add_flag("--quiet,-q", o.quiet, "No progress line");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.command_line = command_line(argc, argv);
  return report_errors("evaluate", [&] {
    nn::run_evaluate(o);
    return 0;
  });
}
