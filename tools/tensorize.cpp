// tensorize: PGN games to a self-describing HDF5 dataset of positions and legal-move masks.
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "run/tensorize/merge.h"
#include "run/tensorize/options.h"
#include "run/tensorize/tensorize.h"
#include "util/option_cli.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{run::TENSORIZE_ABOUT};
  cli::set_version(app, "tensorize");
  run::TensorizeOptions opt;
  app.require_subcommand(0, 1);
  run::tensorize_options().add_to(app, opt);
  cli::add_config(app, "tensorize");  // the conversion's options; not merge's
  data::MergeOptions merge;
  auto* merge_cmd = app.add_subcommand("merge", run::MERGE_ABOUT);
  run::merge_options().add_to(*merge_cmd, merge);

  if (const int status = cli::parse(app, argc, argv, "tensorize"); status >= 0) return status;
  opt.command_line = merge.command_line = command_line(argc, argv);
  return report_errors("tensorize", [&] {
    if (*merge_cmd)
      run::run_merge(merge, opt.quiet);
    else
      run::run_tensorize(opt);
    return 0;
  });
}
