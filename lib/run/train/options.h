// train's options: the struct a run reads, its choice tables, and train_options(), the one
// declaration of every option (flag, field, options.json key, range or choices, help, kept
// on --resume) from which the command line, --help, validate(), options.json and the resume
// check are made (util/option_table.h); beside it --help's text and the checks. A new option is
// a field here, a row in options.cpp and its use.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compute/choices.h"
#include "nn/model_config.h"
#include "train/process_group_spec.h"
#include "train/run_folder.h"
#include "train/training_data.h"
#include "util/choices.h"
#include "util/option_table_fwd.h"

namespace legalnet::run {

// The optimizer; by name, --optimizer, options.json and the checkpoint's "optimizer".
enum class Optimizer { ADAM, ADAMW, SGD };
inline constexpr std::array<Choice<Optimizer>, 3> OPTIMIZERS{{
    {Optimizer::ADAM, "adam"}, {Optimizer::ADAMW, "adamw"}, {Optimizer::SGD, "sgd"},  // Nesterov momentum 0.9
}};

// Where the training rows live: memory loads them compactly and shuffles whole epochs, stream
// reads blocks through a shuffle buffer, auto streams when memory would take over half the RAM
// (by name, --data-mode and options.json's "data_mode").
enum class DataMode { AUTO, MEMORY, STREAM };
inline constexpr std::array<Choice<DataMode>, 3> DATA_MODES{{
    {DataMode::AUTO, "auto"},
    {DataMode::MEMORY, "memory"},
    {DataMode::STREAM, "stream"},
}};

struct TrainOptions {
  std::vector<std::string> data;  // training datasets (several files, or a merged one)
  std::vector<std::string> val;   // validation datasets; empty: split `data` by game
  double val_fraction = 0.02;     // share of games held out when `val` is empty
  uint64_t val_max = 20000;       // positions used for each validation pass
  std::string report;             // the run's JSON summary (--report), written by rank 0
  std::string out;                // run folder: model.safetensors, checkpoint.safetensors, metrics.csv, options.json
  // The architecture (--arch and its sizes, --inputs); its policy head "auto" is the
  // architecture's (nn::ModelSpec's lr and policy_head), resolved with the sizes before the run.
  nn::ModelConfig model{.policy_head = nn::PolicyHead::AUTO};
  int epochs = 1;
  int64_t max_steps = 0;   // 0: epochs decide
  double max_time = 0;     // seconds of training; 0: no limit
  double time_budget = 0;  // minutes: max_steps fixed from a measured step rate before the run; 0: none
  std::string replan;      // "AT:STEPS,...": where the run's length changed (run/train/schedule.h); "": never
  // 128: twice the updates for the rows a budget reads beat 256 at equal time on 2 cores
  // (docs/benchmarks.md#log-2026-11-28-batch-128).
  int batch_size = 128;
  double lr = 0;  // peak learning rate; 0: the architecture's (nn::ModelSpec's lr and policy_head)
  Optimizer optimizer = Optimizer::ADAM;
  double weight_decay = 0;
  double warmup = 0.02;        // share of the steps with a linear warm-up
  double min_lr_ratio = 0.02;  // the cosine decays to lr * min_lr_ratio
  double clip = 1.0;           // gradient-norm clipping; 0: off
  double ema = 0;              // the model file's weights: their moving average's decay a step; 0: the last
  int position_ply_limit = 0;  // train only on positions with ply < this (0: all), like games cut there
  int check_weight = 1;        // positions whose side to move is in check appear this often per epoch
  int rare_weight = 1;         // positions with a legal castling or en-passant move appear this often
  int pin_weight = 1;          // positions with a piece pinned to the mover's king appear this often
  // "NAME=W[,NAME=W...]": positions in situation NAME appear W times (train::RowWeights::parse)
  std::string situation_weight;
  // The rules head (nn::ModelConfig::rules_head): its loss's weight (nn/loss.h, RulesTerm); 0: no head.
  double rules_weight = 0;
  // The move logits' margin in the loss (nn/loss.h, policy_loss); 0: plain BCE.
  double logit_margin = 0;
  // Hard-example mining (run/train/hard_positions.h): this share of each step's rows from a pool
  // of --mine-pool positions the net gets most wrong, refreshed every --mine-every steps (0: none).
  double mine_share = 0;
  int mine_every = 100;
  int mine_pool = 256;
  DataMode data_mode = DataMode::AUTO;
  uint64_t shuffle_buffer = 1 << 18;  // positions in the shuffle buffer of stream mode
  uint64_t seed = 0;
  std::string device = "auto";                            // auto | cpu | cuda | cuda:N
  nn::Precision compute_precision = nn::Precision::AUTO;  // --precision (compute/choices.h)
  nn::Kernels kernels = nn::Kernels::AUTO;                // --kernels (compute/choices.h)
  int threads = 0;                                        // 0: all cores
  int64_t eval_every = 1000;                              // steps between metric rows
  int64_t checkpoint_every = 2000;
  int64_t stop_at_step = 0;  // end this process after this step, checkpointed (0: never)
  bool resume = false;
  bool force = false;
  bool quiet = false;
  std::string command_line;
  // Several processes: --batch-size is per rank, a step takes world_size x batch_size rows,
  // and only rank 0 writes the run folder.
  train::ProcessGroupSpec ranks;
};

// --help's opening paragraph.
extern const char* const TRAIN_ABOUT;

// Every option of train, in --help's order; the keys with options.json's (and the run's facts,
// R::fact, where options.json records them).
const options::Table<TrainOptions>& train_options();

// The checks of a run's options, the table's ranges (validate()) and those across options,
// before any file is read (a typo costs nothing): throws legalnet::Error naming the option.
void check_train_options(const TrainOptions& options);

// How often each row appears in an epoch: --situation-weight's weights, raised by those of
// --check-weight (in_check), --rare-weight (castling, en_passant) and --pin-weight (pinned_piece):
// where two options weight one situation, the larger weight wins. Throws legalnet::Error
// "--situation-weight: ..." for a bad --situation-weight.
train::RowWeights row_weights(const TrainOptions& options);

// The net train builds from `wanted`: its policy head "auto" as the architecture's
// (nn::ModelSpec's lr and policy_head), the rules head where --rules-weight is above 0, then
// ModelConfig::resolved() (which throws legalnet::Error for what cannot be built). The benches
// build the same through it.
nn::ModelConfig trained_model(nn::ModelConfig wanted, double rules_weight = 0);

// What --resume compares with the run's options.json: the kept rows of train_options(), and the data.
std::vector<train::KeptOption> kept_on_resume();
std::vector<train::KeptData> kept_data();

}  // namespace legalnet::run
