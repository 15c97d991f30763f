// train: learns the legal-move masks of a legalnet dataset with binary cross-entropy.
#include <CLI/CLI.hpp>
#include <utility>

#include "cli_options.h"
#include "run/train/run_train.h"
#include "util/files.h"
#include "util/option_cli.h"
#include "util/stop_request.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{run::TRAIN_ABOUT};
  cli::set_version(app, "train");
  run::TrainOptions o;
  run::train_options().add_to(app, o);
  cli::add_config(app, "train");
  if (const int status = cli::parse(app, argc, argv, "train"); status >= 0) return status;
  o.command_line = command_line(argc, argv);
  return report_errors("train", [&] {
    // options.json records the names and the command line, and JSON holds UTF-8 text only:
    // a name that is not is refused before any work, naming its option.
    const NamedPath record{"the run's options.json", o.out + "/options.json"};
    for (const auto& [option, paths] : {std::pair{"--data", o.data}, std::pair{"--val", o.val}})
      for (const std::string& path : paths) check_json_text(option, path, record);
    check_json_text("--out", o.out, record);
    if (!o.report.empty()) check_json_text("--report", o.report, {"--report", o.report});
    check_json_text("the command line", o.command_line, record);
    catch_stop_requests();  // SIGTERM, SIGUSR1: a checkpoint, then EXIT_STOPPED
    o.ranks = train::process_group_from_environment();
    return run::run_train(o).stop_signal ? EXIT_STOPPED : 0;
  });
}
