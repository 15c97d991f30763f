// train: learns the legal-move masks of a legalnet dataset with binary cross-entropy.
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "run/train/run_train.h"
#include "util/stop_request.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  CLI::App app{
      "train: trains a policy net (mlp, conv, resnet or attention) to predict the legal moves of a position with "
      "binary\n"
      "cross-entropy, on CPU or CUDA. Data: --data-mode memory loads the datasets compactly (about 160\n"
      "bytes a position) and shuffles whole epochs; stream reads blocks of 8192 rows as training goes\n"
      "through a shuffle buffer (for datasets larger than memory); auto (default) streams only when the\n"
      "datasets would take more than half the available memory. Writes OUT/model.safetensors,\n"
      "OUT/checkpoint.safetensors, OUT/metrics.csv and OUT/options.json.\n"
      "Several processes (torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or srun's SLURM_PROCID/\n"
      "SLURM_NTASKS) train one model data-parallel: --batch-size is per process, gradients are averaged,\n"
      "rank 0 writes OUT."};
  cli::set_version(app, "train");
  run::TrainOptions o;
  run::TRAIN_TABLE.add_to(app, o);
  cli::add_config(app, "train");
  if (const int status = cli::parse(app, argc, argv, "train"); status >= 0) return status;
  o.command_line = command_line(argc, argv);
  return report_errors("train", [&] {
    catch_stop_requests();  // SIGTERM, SIGUSR1: a checkpoint, then EXIT_STOPPED
    o.ranks = train::process_group_from_environment();
    return run::run_train(o).stop_signal ? EXIT_STOPPED : 0;
  });
}
