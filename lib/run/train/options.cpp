#include "run/train/options.h"

#include <algorithm>
#include <cmath>

#include "chess/situations.h"
#include "run/device_rows.h"
#include "run/train/option_texts.h"
#include "run/train/schedule.h"
#include "util/choices.h"
#include "util/error.h"
#include "util/option_cli.h"

namespace legalnet::run {
namespace {

using R = options::Rows<TrainOptions>;

// The fields inside `model` (options.json's "model", the net the run builds).
#define MODEL_FIELD(name) \
  [](auto& o) -> auto& { return o.model.name; }

// encode's input kinds as a choice table (util/choices.h).
const std::array<Choice<encode::InputKind>, encode::INPUT_KIND_NB> INPUT_KINDS = [] {
  std::array<Choice<encode::InputKind>, encode::INPUT_KIND_NB> kinds{};
  for (int k = 0; k < encode::INPUT_KIND_NB; ++k)
    kinds[size_t(k)] = {encode::InputKind(k), encode::input_spec(encode::InputKind(k)).name};
  return kinds;
}();

// The old --max-ply / --max-plies N kept positions with ply <= N, and -1 meant all.
std::string old_max_ply(const std::string& text) {
  int n = 0;
  return CLI::detail::lexical_cast(text, n) && n >= -1 && n < 100000 ? std::to_string(n + 1)
                                                                     : text + " (expected -1..99999)";
}

using Rows = std::vector<options::Row<TrainOptions>>;

// The data and the outputs.
Rows data_rows() {
  return {
      R::value(&TrainOptions::data, "--data", "data", "Training dataset(s)").required(),
      R::value(&TrainOptions::val, "--val", "val", "Validation dataset(s); default: a split of --data by game"),
      R::value(&TrainOptions::val_fraction, "--val-fraction", "val_fraction", "Share of games held out without --val")
          .range(0, 0.99)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::val_max, "--val-max", "val_max", "Positions used per validation pass")
          .range(1, options::MAX_COUNT)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::out, "--out", "", "Run folder (runs/NAME)").required(),
      R::value(&TrainOptions::report, "--report", "",
               "Also write the run's summary (steps, validation figures, speed) as JSON"),
  };
}

// The net: options.json records it whole as the fact "model" (resolved); --resume compares it key by key.
Rows model_rows() {
  return {
      R::choice(MODEL_FIELD(kind), "--arch", "model/kind", nn::MODEL_SPECS, architectures_help())
          .inside_fact()
          .keep_on_resume(),
      R::alias("--model", "--arch"),
      R::value(MODEL_FIELD(hidden), "--hidden", "model/hidden",
               nn::size_help(&nn::SizeMeanings::hidden, &nn::ModelSizes::hidden))
          .int_range(0, nn::MAX_SIZES.hidden)
          .inside_fact()
          .keep_on_resume(),
      R::value(MODEL_FIELD(blocks), "--blocks", "model/blocks",
               nn::size_help(&nn::SizeMeanings::blocks, &nn::ModelSizes::blocks))
          .int_range(0, nn::MAX_SIZES.blocks)
          .inside_fact()
          .keep_on_resume(),
      R::value(MODEL_FIELD(channels), "--channels", "model/channels",
               nn::size_help(&nn::SizeMeanings::channels, &nn::ModelSizes::channels))
          .int_range(0, nn::MAX_SIZES.channels)
          .inside_fact()
          .keep_on_resume(),
      R::value(MODEL_FIELD(heads), "--heads", "model/heads",
               nn::size_help(&nn::SizeMeanings::heads, &nn::ModelSizes::heads))
          .int_range(0, nn::MAX_SIZES.heads)
          .inside_fact()
          .keep_on_resume(),
      R::flag(MODEL_FIELD(squeeze_excitation), "--se", "model/squeeze_excitation",
              "resnet: squeeze-excitation in each block")
          .inside_fact()
          .keep_on_resume(),
      R::choice(MODEL_FIELD(mixing), "--mixing", "model/mixing", nn::MIXINGS,
                "resnet: none; lines (each block also mixes features along every square's rank, file and "
                "diagonals: one block sees a whole line); or rays (each block also carries features along the 8 "
                "directions square by square through gates it learns: a line that stops at a blocker)")
          .inside_fact()
          .keep_on_resume(),
      R::choice(MODEL_FIELD(policy_head), "--policy-head", "model/policy_head", nn::POLICY_HEADS,
                "resnet: types (a move's logit from its from-square, by move type), or pairs (types plus a "
                "query of the from-square times a key of the to-square); auto: pairs for a resnet, types "
                "(the only head) for the others")
          .inside_fact()
          .keep_on_resume(),
      R::flag(MODEL_FIELD(paths), "--paths", "model/paths",
              "resnet: each move's logit less a blocking value the net learns for each square strictly between "
              "its from- and to-square (the way a slider, a pawn's double step or castling must find empty)")
          .inside_fact()
          .keep_on_resume(),
      R::flag(MODEL_FIELD(vetoes), "--vetoes", "model/vetoes",
              "resnet: each move's logit less vetoes of its line (file, diagonals, rank, knight jump), each a "
              "value of its from-square plus one of its to-square (a pinned piece off its line, a pawn onto a piece)")
          .inside_fact()
          .keep_on_resume(),
      R::flag(MODEL_FIELD(input_skip), "--input-skip", "model/input_skip",
              "resnet: the tower's output plus a 1x1 convolution of the input planes, so that every head (the "
              "paths, the vetoes, the pairs) reads what stands on a square directly")
          .inside_fact()
          .keep_on_resume(),
      R::choice(MODEL_FIELD(inputs), "--inputs", "model/input_kind", INPUT_KINDS,
                "What the net sees: state (the position from the mover's side, nothing derived), planes (the "
                "predecessor's 7), attacks / state+attacks (+3 planes from the move generator: engine-assisted)")
          .inside_fact()
          .keep_on_resume(),
      R::flag(MODEL_FIELD(geometric_head), "!--full-head", "model/geometric_head",
              "mlp/conv: a 4096-wide last layer, as the predecessor (default: the 1792 possible moves)")
          .inside_fact()
          .keep_on_resume(),
      R::fact("model"),
      R::fact("model_description"),
      R::fact("input_kind"),
      R::fact("input_kind_from_move_generator"),
      R::fact("compute_precision"),  // --precision as resolved on this device
      R::fact("kernels"),            // --kernels (its row is with the device's), recorded beside the precision
      R::fact("forward_flops_per_position"),
  };
}

// How long and how it learns.
Rows schedule_rows() {
  return {
      R::value(&TrainOptions::epochs, "--epochs", "epochs", "Passes over the training set")
          .int_range(1, 1000000)
          .show_default(),
      R::value(&TrainOptions::max_steps, "--max-steps", "max_steps",
               "Stop after this many steps (the schedule spans them)")
          .range(0, options::MAX_COUNT),
      R::value(&TrainOptions::max_time, "--max-time", "", "Stop after this many seconds of training").range(0, 1e9),
      R::value(&TrainOptions::time_budget, "--time-budget", "",
               "Minutes for the training steps: this machine's step rate is measured first and --max-steps set so "
               "that the run fits, at most the --max-steps given; while it runs, the run moves its end to the pace "
               "its steps keep (--replan; options.json records both, and that --max-steps and --replan rerun the "
               "run byte for byte)")
          .range(0, 1e6),
      R::value(&TrainOptions::replan, "--replan", "replan",
               "AT:STEPS[,AT:STEPS]: from step AT on the run ends at step STEPS, each step at the rate a run of "
               "STEPS steps has there: what --time-budget does while it runs when its steps go slower or faster than "
               "measured (options.json records them: --max-steps with that --replan reruns the run byte for byte)"),
      R::fact("total_steps"),
      R::value(&TrainOptions::batch_size, "--batch-size", "batch_size", "Positions per step")
          .int_range(1, 1 << 20)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::lr, "--lr", "lr", learning_rate_help()).range(0, 100).keep_on_resume(),
      // "architecture" (--lr left out: each re-plan takes the architecture's peak for its length) or
      // "given" (--lr's peak for every plan); options.json's lr is the first plan's peak either way.
      R::fact("lr_rule").keep_on_resume("the learning rate's rule (--lr left out, or given)"),
      R::choice(&TrainOptions::optimizer, "--optimizer", "optimizer", OPTIMIZERS,
                "Adam, AdamW, or SGD with Nesterov momentum 0.9")
          .keep_on_resume(),
      R::value(&TrainOptions::weight_decay, "--weight-decay", "weight_decay", "Weight decay")
          .range(0, 10)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::warmup, "--warmup", "warmup", "Share of steps of linear warm-up, then cosine decay")
          .range(0, 1)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::min_lr_ratio, "--min-lr-ratio", "min_lr_ratio", "Final learning rate / peak")
          .range(0, 1)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::clip, "--clip", "clip", "Gradient-norm clipping (0: off)")
          .range(0, 1e6)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::ema, "--ema", "ema",
               "The model file holds an exponential moving average of the weights (and batch norm's statistics) "
               "with this decay a step, e.g. 0.999 (0: the last step's weights)")
          .range(0, 0.99999)
          .show_default()
          .keep_on_resume(),
  };
}

// Which rows, how often and in which order.
Rows sample_rows() {
  return {
      R::value(&TrainOptions::position_ply_limit, "--position-ply-limit", "position_ply_limit",
               "Train only on the positions before this ply of each game, as if games were cut there (0: all)")
          .int_range(0, 100000)
          .show_default()
          .keep_on_resume(),
      R::alias("--max-plies", "--position-ply-limit", old_max_ply),
      R::alias("--max-ply", "--position-ply-limit", old_max_ply),
      R::value(&TrainOptions::check_weight, "--check-weight", "check_weight",
               "Positions whose side to move is in check appear this many times per epoch (the hardest 5%)")
          .int_range(1, train::MAX_ROW_WEIGHT)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::rare_weight, "--rare-weight", "rare_weight",
               "Positions with a legal castling or en-passant move appear this many times per epoch (a few in a "
               "thousand)")
          .int_range(1, train::MAX_ROW_WEIGHT)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::pin_weight, "--pin-weight", "pin_weight",
               "Positions where a piece of the side to move is pinned to its king appear this many times per epoch "
               "(a larger weight wins where a row is several of these)")
          .int_range(1, train::MAX_ROW_WEIGHT)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::situation_weight, "--situation-weight", "situation_weight", situation_weight_help())
          .validator(situation_weights())
          .keep_on_resume(),
  };
}

// What the loss asks of the net beside the legal moves, and how.
Rows loss_rows() {
  return {
      R::value(&TrainOptions::rules_weight, "--rules-weight", "rules_weight",
               "resnet: weight of a second loss on a head guessing from the tower the squares the opponent attacks, "
               "the pinned pieces and the lines answering a check (--inputs attacks' planes; at 1 each of their "
               "values weighs as one move index); the inputs stay the position; 0: no head")
          .range(0, 100)
          .show_default()
          .keep_on_resume(),
      R::flag(MODEL_FIELD(rule_lines), "--rule-lines", "model/rule_lines",
              "--rules-weight: the head guesses each pin by its line and, for every square, whether a move of a "
              "piece other than the king may end there by the check rule (what the vetoes need) instead")
          .inside_fact()
          .keep_on_resume(),
      R::value(&TrainOptions::logit_margin, "--logit-margin", "logit_margin",
               "The loss scores each move's logit as if this many logits less sure (a legal move's lower, an "
               "illegal one's higher), so that it goes on sharpening the outputs where plain BCE has all but "
               "stopped: fewer small probabilities on illegal moves for a sampled pick to meet (docs/train.md); "
               "0: plain BCE")
          .range(0, 20)
          .show_default()
          .keep_on_resume(),
  };
}

// Where the rows come from: mined by the net, held in memory or streamed, and the seed.
Rows source_rows() {
  return {
      R::value(&TrainOptions::mine_share, "--mine-share", "mine_share",
               "Share of each step's positions mined by the net itself: a pool of the positions it gets most "
               "wrong, found as evaluate's adversary and position search find them (positions after a legal move "
               "and legal edits, climbing the net's worst margin; fresh starts from random placements and random "
               "games); 0: none")
          .range(0, 0.5)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::mine_every, "--mine-every", "mine_every",
               "--mine-share: steps between refreshes of the pool (each costs a forward pass over 8 x --mine-pool "
               "positions)")
          .int_range(1, 1000000)
          .show_default()
          .keep_on_resume(),
      R::value(&TrainOptions::mine_pool, "--mine-pool", "mine_pool", "--mine-share: positions in the pool")
          .int_range(1, 65536)
          .show_default()
          .keep_on_resume(),
      R::choice(&TrainOptions::data_mode, "--data-mode", "data_mode", DATA_MODES,
                "Where the training rows live (see above)")
          .keep_on_resume(),
      R::value(&TrainOptions::shuffle_buffer, "--shuffle-buffer", "shuffle_buffer",
               "stream: positions held in the shuffle buffer")
          .range(1, 1e10)
          .show_default()
          .keep_on_resume(),
      R::fact("processes").keep_on_resume("the number of processes (WORLD_SIZE)"),
      R::value(&TrainOptions::seed, "--seed", "seed", "Seed of initialisation, shuffling and the validation split")
          .show_default()
          .keep_on_resume(),
      R::fact("train_positions"),
      R::fact("val_positions"),
      R::fact("data_files"),  // each dataset's resolved path, counts and fingerprint (the resume check's)
      R::fact("val_files"),
      R::fact("machine"),  // {"cpu", "device"}: where it trained (util/machine.h), as every figure names it
  };
}

// How fast, how often it reports, when it stops and what it says (not recorded, free on --resume).
Rows run_rows() {
  return {
      kernels_row<TrainOptions>(),
      R::value(&TrainOptions::eval_every, "--eval-every", "", "Steps between validation rows in metrics.csv")
          .range(1, options::MAX_COUNT)
          .show_default(),
      R::value(&TrainOptions::checkpoint_every, "--checkpoint-every", "", "Steps between checkpoints")
          .range(1, options::MAX_COUNT)
          .show_default(),
      R::value(&TrainOptions::stop_at_step, "--stop-at-step", "",
               "End this process after this step with a checkpoint, to --resume later (e.g. within a job's "
               "time limit); the schedule still spans the whole run")
          .range(0, options::MAX_COUNT),
      R::flag(&TrainOptions::resume, "--resume", "", "Continue the run in --out from its checkpoint"),
      R::flag(&TrainOptions::force, "--force", "",
              "Replace the run in --out (its files wait in OUT/replaced/ until the new model is saved)")
          .excludes("--resume"),
      R::flag(&TrainOptions::quiet, "--quiet,-q", "", "No progress bar and no per-evaluation lines"),
  };
}

// The groups in --help's order.
Rows all_rows() {
  Rows rows;
  for (Rows group : {data_rows(), model_rows(), schedule_rows(), sample_rows(), loss_rows(), source_rows(),
                     device_rows<TrainOptions>(), run_rows()})
    for (auto& row : group) rows.push_back(std::move(row));
  return rows;
}

#undef MODEL_FIELD

}  // namespace

const char* const TRAIN_ABOUT =
    "train: trains a policy net (mlp, conv, resnet or attention) to predict the legal moves of a position with "
    "binary\n"
    "cross-entropy, on CPU or CUDA. Data: --data-mode memory loads the datasets compactly (about 160\n"
    "bytes a position) and shuffles whole epochs; stream reads blocks of 8192 rows as training goes\n"
    "through a shuffle buffer (for datasets larger than memory); auto (default) streams only when the\n"
    "datasets would take more than half the available memory. Writes OUT/model.safetensors,\n"
    "OUT/checkpoint.safetensors, OUT/metrics.csv and OUT/options.json.\n"
    "Several processes (torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or srun's SLURM_PROCID/\n"
    "SLURM_NTASKS) train one model data-parallel: --batch-size is per process, gradients are averaged,\n"
    "rank 0 writes OUT.";

const options::Table<TrainOptions>& train_options() {
  static const options::Table<TrainOptions> table{"train", all_rows()};
  return table;
}

void check_train_options(const TrainOptions& o) {
  if (o.data.empty()) throw Error("no training data: give --data FILE.h5");
  if (o.out.empty()) throw Error("no run folder: give --out runs/NAME");
  train_options().validate(o);
  if (o.time_budget > 0 && o.resume)
    throw Error(
        "--time-budget with --resume: give the run's --max-steps and --replan instead (its options.json's "
        "max_steps and replan): a new measure would change the run's length and its schedule");
  if (o.time_budget > 0 && !o.replan.empty())
    throw Error(
        "--replan with --time-budget: the budget makes its own re-plans (give --max-steps and --replan alone to "
        "rerun a budgeted run)");
  parse_replans(o.replan);
  (void)row_weights(o);
}

train::RowWeights row_weights(const TrainOptions& o) {
  train::RowWeights weights;
  try {
    weights = train::RowWeights::parse(o.situation_weight);
  } catch (const Error& e) {
    throw Error(std::string("--situation-weight: ") + e.what());
  }
  return weights.raise(chess::SIT_IN_CHECK, o.check_weight)
      .raise(chess::SIT_CASTLING, o.rare_weight)
      .raise(chess::SIT_EN_PASSANT, o.rare_weight)
      .raise(chess::SIT_PINNED_PIECE, o.pin_weight);
}

nn::ModelConfig trained_model(nn::ModelConfig wanted, double rules_weight) {
  wanted.rules_head = rules_weight > 0;
  if (wanted.policy_head == nn::PolicyHead::AUTO) wanted.policy_head = nn::model_spec(wanted.kind).policy_head;
  return wanted.resolved();
}

std::vector<train::KeptOption> kept_on_resume() {
  std::vector<train::KeptOption> kept;
  for (const options::KeptOption& k : train_options().kept()) kept.push_back({k.pointer, k.option});
  return kept;
}

// --data and --val: the spelling given, and the files' identities (options.json's "data_files").
std::vector<train::KeptData> kept_data() { return {{"data", "data_files", "--data"}, {"val", "val_files", "--val"}}; }

}  // namespace legalnet::run
