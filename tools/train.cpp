// train: learns the legal-move masks of a legalnet dataset with binary cross-entropy.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "nn/device.h"
#include "nn/trainer.h"
#include "util/tool_main.h"
#include "util/version.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  nn::ensure_passive_openmp(argv);
  CLI::App app{
      "train: trains a policy net (mlp, conv, resnet or attention) to predict the legal moves of a position with "
      "binary\n"
      "cross-entropy, on CPU or CUDA. Data: --data-mode memory loads the datasets compactly (about 160\n"
      "bytes a position) and shuffles whole epochs; stream reads blocks of 8192 rows as training goes\n"
      "through a shuffle buffer (for datasets larger than memory); auto (default) streams only when the\n"
      "datasets would take more than half the available memory. Writes OUT/model.pt,\n"
      "OUT/checkpoint.pt, OUT/metrics.csv and OUT/options.json.\n"
      "Several processes (torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or srun's SLURM_PROCID/\n"
      "SLURM_NTASKS) train one model data-parallel: --batch-size is per process, gradients are averaged,\n"
      "rank 0 writes OUT."};
  app.set_version_flag("--version", std::string("train ") + VERSION + " (" + GIT_DESCRIBE + ")");
  app.set_config("--config", "", "Read options from an INI or TOML file (keys are the long option names)");
  nn::TrainOptions o;
  app.add_option("--data", o.data, "Training dataset(s)")->required();
  app.add_option("--val", o.val, "Validation dataset(s); default: a split of --data by game");
  app.add_option("--val-fraction", o.val_fraction, "Share of games held out without --val")->capture_default_str();
  app.add_option("--val-max", o.val_max, "Positions used per validation pass")->capture_default_str();
  app.add_option("--out", o.out, "Run folder (runs/NAME)")->required();
  app.add_option("--model", o.model.kind, "The architecture (docs/train.md)")
      ->check(CLI::IsMember({"mlp", "conv", "resnet", "attention"}))
      ->capture_default_str();
  app.add_option("--hidden", o.model.hidden,
                 "mlp: hidden width (4096); conv: FC width (1024); attention: feed-forward width (2 x channels)");
  app.add_option("--blocks", o.model.blocks, "conv/resnet: blocks (8 / 6); attention: layers (6)");
  app.add_option("--channels", o.model.channels, "conv/resnet: filters (128 / 32); attention: token width (64)");
  app.add_option("--heads", o.model.heads, "attention: heads per layer (4)");
  app.add_flag("--se", o.model.squeeze_excitation, "resnet: squeeze-excitation in each block");
  std::string inputs = "state";
  app.add_option("--inputs", inputs,
                 "What the net sees: state (the position from the mover's side, nothing derived), planes (the "
                 "predecessor's 7), attacks / state+attacks (+3 planes from the move generator: engine-assisted)")
      ->check(CLI::IsMember({"state", "planes", "attacks", "state+attacks"}))
      ->capture_default_str();
  app.add_flag("!--full-head", o.model.geometric_head,
               "mlp/conv: a 4096-wide last layer, as the predecessor (default: the 1792 possible moves)");
  app.add_option("--epochs", o.epochs, "Passes over the training set")->capture_default_str();
  app.add_option("--max-steps", o.max_steps, "Stop after this many steps (the schedule spans them)");
  app.add_option("--max-time", o.max_time, "Stop after this many seconds of training");
  app.add_option("--batch-size", o.batch_size, "Positions per step")->capture_default_str();
  app.add_option("--lr", o.lr, "Peak learning rate")->capture_default_str();
  app.add_option("--optimizer", o.optimizer, "adam | adamw | sgd")->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "Weight decay")->capture_default_str();
  app.add_option("--warmup", o.warmup, "Share of steps of linear warm-up, then cosine decay")->capture_default_str();
  app.add_option("--min-lr-ratio", o.min_lr_ratio, "Final learning rate / peak")->capture_default_str();
  app.add_option("--clip", o.clip, "Gradient-norm clipping (0: off)")->capture_default_str();
  app.add_option("--max-ply", o.max_ply, "Train only on positions with ply <= this (-1: all)")->capture_default_str();
  app.add_option("--check-weight", o.check_weight,
                 "Positions whose side to move is in check appear this many times per epoch (the hardest 5%)")
      ->capture_default_str();
  app.add_option("--rare-weight", o.rare_weight,
                 "Positions with a legal castling or en-passant move appear this many times per epoch (a few in a "
                 "thousand)")
      ->capture_default_str();
  app.add_option("--data-mode", o.data_mode, "auto | memory | stream (see above)")->capture_default_str();
  app.add_option("--shuffle-buffer", o.shuffle_buffer, "stream: positions held in the shuffle buffer")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of initialisation, shuffling and the validation split")->capture_default_str();
  app.add_option("--device", o.device, "auto | cpu | cuda | cuda:N")->capture_default_str();
  app.add_option("--precision", o.precision,
                 "Forward pass arithmetic; auto: bf16 on CUDA and on CPUs with AVX-512 BF16 or AMX, else fp32 "
                 "(weights, optimizer and loss stay fp32)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads (0: all cores)")->capture_default_str();
  app.add_option("--eval-every", o.eval_every, "Steps between validation rows in metrics.csv")->capture_default_str();
  app.add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")->capture_default_str();
  app.add_option("--stop-at-step", o.stop_at_step,
                 "End this process after this step with a checkpoint, to --resume later (e.g. within a job's time "
                 "limit); the schedule still spans the whole run");
  app.add_flag("--resume", o.resume, "Continue the run in --out from its checkpoint");
  app.add_flag("--force", o.force, "Overwrite a finished run in --out");
  app.add_flag("--quiet,-q", o.quiet, "No progress bar and no per-evaluation lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.command_line = command_line(argc, argv);
  return report_errors("train", [&] {
    o.model.inputs = encode::parse_input_kind(inputs);
    o.ranks = nn::process_group_from_environment();
    nn::run_train(o);
    return 0;
  });
}
