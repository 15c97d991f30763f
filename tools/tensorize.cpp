// tensorize: PGN games to a self-describing HDF5 dataset of positions and legal-move masks.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "data/dataset_merge.h"
#include "run/tensorize.h"
#include "util/console.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{
      "tensorize: replays PGN games (gen_moves output or real games; plain, .gz or .zst) and writes an HDF5\n"
      "dataset: positions int8 (N,7,8,8), legal_moves uint8 (N,4096), and per-row/per-game provenance.\n"
      "See docs/dataset.md. A game that cannot be read (syntax, a bad FEN tag, an illegal move) or that is\n"
      "another variant (Variant tag, Chess960) is reported and skipped; a file that is not PGN fails the run."};
  cli::set_version(app, "tensorize");
  run::TensorizeOptions opt;
  app.require_subcommand(0, 1);
  app.add_option("--in,-i", opt.pgn_files, "Input PGN file ('-' for stdin); repeat for several");
  app.add_option("--out,-o", opt.out, "Output dataset (.h5); with --split, NAME.train.h5, NAME.val.h5, ...");
  cli::add_threads_option(app, opt.threads, "Worker threads (replay, encoding, compression)");
  app.add_flag("--strict", opt.strict, "Stop at the first bad game instead of skipping it");
  app.add_flag("--include-final", opt.include_final, "Also write each game's final position (played_move -1)");
  app.add_flag("--dedupe", opt.dedupe, "Drop positions already written (same placement, side, castling, e.p.)");
  app.add_option("--max-positions", opt.max_positions,
                 "Stop before the game that would exceed this many rows (0: no limit)")
      ->check(cli::in_range(0, cli::MAX_COUNT));
  app.add_option("--split", opt.split, "Fractions by game for train,val[,test] files, e.g. 0.9,0.05,0.05")
      ->delimiter(',');
  app.add_option("--split-seed", opt.split_seed, "Seed of the split by game")->capture_default_str();
  app.add_flag("--quiet,-q", opt.quiet, "No progress line, no notes and no summary (skipped games are still reported)");
  auto* report = app.add_option("--report", opt.report,
                                "Also write the summary as JSON to this file: games read, kept and skipped by reason");
  cli::deprecate(app.add_option("--stats-json", opt.report), "tensorize", report);
  data::MergeOptions merge;
  auto* merge_cmd = app.add_subcommand(
      "merge",
      "Join dataset shards into one dataset: HDF5 virtual datasets over the shards (no copy; keep the shards,\n"
      "stored relative to the output's folder), or one real file with --copy. Every shard is checked first.");
  merge_cmd->add_option("--out,-o", merge.out, "Joined dataset (.h5)")->required();
  merge_cmd->add_option("shards", merge.shards, "Shard datasets, in order")->required();
  merge_cmd->add_flag("--copy", merge.copy, "Copy the shards' data into the output instead of referring to it");
  if (const int status = cli::parse(app, argc, argv, "tensorize"); status >= 0) return status;
  opt.command_line = command_line(argc, argv);
  return report_errors("tensorize", [&] {
    if (*merge_cmd) {
      merge.command_line = opt.command_line;
      const auto summary = data::merge_datasets(merge);
      if (!opt.quiet)
        say("tensorize merge: {} games, {} positions from {} shards into {}\n", summary.games, summary.positions,
            merge.shards.size(), merge.out);
      return 0;
    }
    if (opt.pgn_files.empty() || opt.out.empty())
      throw Error("give --in FILE and --out FILE.h5 (or the merge subcommand); see --help");
    run::run_tensorize(opt);
    return 0;
  });
}
