// evaluate: how well has a model learned the rules? Metrics on a dataset, games, pictures.
// The options are declared in run/evaluate/options.h, the run in run/evaluate/.
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "run/evaluate/evaluate.h"
#include "run/evaluate/uci.h"
#include "util/option_cli.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{run::EVALUATE_ABOUT};
  cli::set_version(app, "evaluate");
  run::EvaluateOptions o;
  run::evaluate_options().add_to(app, o);
  cli::add_config(app, "evaluate");
  if (const int status = cli::parse(app, argc, argv, "evaluate"); status >= 0) return status;
  o.command_line = command_line(argc, argv);
  return report_errors("evaluate", [&] {
    if (o.uci) return run::run_uci(o);
    run::run_evaluate(o);
    return 0;
  });
}
