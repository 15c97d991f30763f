// train: learns the legal-move masks of a legalnet dataset with binary cross-entropy.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli_options.h"
#include "run/train.h"
#include "util/process.h"
#include "util/tool_main.h"

int main(int argc, char** argv) {
  using namespace legalnet;
  ensure_passive_openmp(argv);
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
  app.set_config("--config", "", "Read options from an INI or TOML file (keys are the long option names)");
  run::TrainOptions o;
  app.add_option("--data", o.data, "Training dataset(s)")->required();
  app.add_option("--val", o.val, "Validation dataset(s); default: a split of --data by game");
  app.add_option("--val-fraction", o.val_fraction, "Share of games held out without --val")
      ->check(cli::in_range(0, 0.99))
      ->capture_default_str();
  app.add_option("--val-max", o.val_max, "Positions used per validation pass")
      ->check(cli::in_range(1, cli::MAX_COUNT))
      ->capture_default_str();
  app.add_option("--out", o.out, "Run folder (runs/NAME)")->required();
  app.add_option("--report", o.report, "Also write the run's summary (steps, validation figures, speed) as JSON");
  std::string architectures = "The architecture (docs/train.md):";
  for (const nn::ModelSpec& spec : nn::MODEL_SPECS) architectures += fmt::format(" {}, {};", spec.name, spec.description);
  architectures.back() = '.';
  auto* arch = cli::add_choice(app, "--arch", o.model.kind, nn::MODEL_SPECS, architectures);
  cli::deprecate(cli::add_choice(app, "--model", o.model.kind, nn::MODEL_SPECS, ""), "train", arch);
  app.add_option("--hidden", o.model.hidden,
                 "mlp: hidden width (4096); conv: FC width (1024); attention: feed-forward width (2 x channels)")
      ->check(CLI::Range(0, nn::MAX_SIZES.hidden));
  app.add_option("--blocks", o.model.blocks, "conv/resnet: blocks (8 / 6); attention: layers (6)")
      ->check(CLI::Range(0, nn::MAX_SIZES.blocks));
  app.add_option("--channels", o.model.channels, "conv/resnet: filters (128 / 32); attention: token width (64)")
      ->check(CLI::Range(0, nn::MAX_SIZES.channels));
  app.add_option("--heads", o.model.heads, "attention: heads per layer (4)")
      ->check(CLI::Range(0, nn::MAX_SIZES.heads));
  app.add_flag("--se", o.model.squeeze_excitation, "resnet: squeeze-excitation in each block");
  app.add_option("--mixing", o.model.mixing,
                 "resnet: none, or lines (each block also mixes features along every square's rank, file and "
                 "diagonals: one block sees a whole line)")
      ->check(CLI::IsMember({"none", "lines"}))
      ->capture_default_str();
  std::string inputs = o.model.inputs_name();  // the default is ModelConfig's
  std::vector<std::string> input_kinds;
  for (int k = 0; k < encode::INPUT_KIND_NB; ++k) input_kinds.emplace_back(encode::input_spec(encode::InputKind(k)).name);
  app.add_option("--inputs", inputs,
                 "What the net sees: state (the position from the mover's side, nothing derived), planes (the "
                 "predecessor's 7), attacks / state+attacks (+3 planes from the move generator: engine-assisted)")
      ->check(CLI::IsMember(input_kinds))
      ->capture_default_str();
  app.add_flag("!--full-head", o.model.geometric_head,
               "mlp/conv: a 4096-wide last layer, as the predecessor (default: the 1792 possible moves)");
  app.add_option("--epochs", o.epochs, "Passes over the training set")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--max-steps", o.max_steps, "Stop after this many steps (the schedule spans them)")
      ->check(cli::in_range(0, cli::MAX_COUNT));
  app.add_option("--max-time", o.max_time, "Stop after this many seconds of training")->check(cli::in_range(0, 1e9));
  app.add_option("--batch-size", o.batch_size, "Positions per step")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  std::string learning_rates = "Peak learning rate; 0 or left out: the architecture's (";
  for (const run::DefaultLr& row : run::DEFAULT_LRS)
    learning_rates += fmt::format("{} {:g}, ", nn::model_spec(row.value).name, row.lr);
  learning_rates.replace(learning_rates.size() - 2, 2, ")");
  app.add_option("--lr", o.lr, learning_rates)->check(cli::in_range(0, 100));
  cli::add_choice(app, "--optimizer", o.optimizer, run::OPTIMIZERS, "Adam, AdamW, or SGD with Nesterov momentum 0.9");
  app.add_option("--weight-decay", o.weight_decay, "Weight decay")->check(cli::in_range(0, 10))->capture_default_str();
  app.add_option("--warmup", o.warmup, "Share of steps of linear warm-up, then cosine decay")
      ->check(cli::in_range(0, 1))
      ->capture_default_str();
  app.add_option("--min-lr-ratio", o.min_lr_ratio, "Final learning rate / peak")
      ->check(cli::in_range(0, 1))
      ->capture_default_str();
  app.add_option("--clip", o.clip, "Gradient-norm clipping (0: off)")
      ->check(cli::in_range(0, 1e6))
      ->capture_default_str();
  auto* ply_limit = app.add_option("--position-ply-limit", o.position_ply_limit,
                                   "Train only on the positions before this ply of each game, as if games were cut "
                                   "there (0: all)")
                        ->check(CLI::Range(0, 100000))
                        ->capture_default_str();
  // The old --max-ply / --max-plies N kept positions with ply <= N, and -1 meant all.
  const auto old_max_ply = [](const std::string& text) {
    int n = 0;
    return CLI::detail::lexical_cast(text, n) && n >= -1 && n < 100000 ? std::to_string(n + 1) : text + " (expected -1..99999)";
  };
  for (const char* old : {"--max-plies", "--max-ply"})
    cli::deprecate(app.add_option(old, o.position_ply_limit), "train", ply_limit, old_max_ply);
  app.add_option("--check-weight", o.check_weight,
                 "Positions whose side to move is in check appear this many times per epoch (the hardest 5%)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--rare-weight", o.rare_weight,
                 "Positions with a legal castling or en-passant move appear this many times per epoch (a few in a "
                 "thousand)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cli::add_choice(app, "--data-mode", o.data_mode, run::DATA_MODES, "Where the training rows live (see above)");
  app.add_option("--shuffle-buffer", o.shuffle_buffer, "stream: positions held in the shuffle buffer")
      ->check(cli::in_range(1, 1e10))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of initialisation, shuffling and the validation split")->capture_default_str();
  cli::add_device_options(app, {&o.device, &o.compute_precision, &o.threads});
  cli::add_choice(app, "--kernels", o.kernels, nn::KERNELS,
                  "resnet's 3x3 convolutions on a CPU in fp32: torch's, or board (Winograd F(4x4,3x3) on the 8x8 "
                  "board, our own; same weights); CUDA and bf16 always run torch's");
  app.add_option("--eval-every", o.eval_every, "Steps between validation rows in metrics.csv")
      ->check(cli::in_range(1, cli::MAX_COUNT))
      ->capture_default_str();
  app.add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")
      ->check(cli::in_range(1, cli::MAX_COUNT))
      ->capture_default_str();
  app.add_option("--stop-at-step", o.stop_at_step,
                 "End this process after this step with a checkpoint, to --resume later (e.g. within a job's time "
                 "limit); the schedule still spans the whole run")
      ->check(cli::in_range(0, cli::MAX_COUNT));
  app.add_flag("--resume", o.resume, "Continue the run in --out from its checkpoint");
  app.add_flag("--force", o.force,
               "Replace the run in --out (its files wait in OUT/replaced/ until the new model is saved)")
      ->excludes("--resume");
  app.add_flag("--quiet,-q", o.quiet, "No progress bar and no per-evaluation lines");
  if (const int status = cli::parse(app, argc, argv, "train"); status >= 0) return status;
  o.command_line = command_line(argc, argv);
  return report_errors("train", [&] {
    o.model.inputs = encode::parse_input_kind(inputs);
    o.ranks = train::process_group_from_environment();
    run::run_train(o);
    return 0;
  });
}
