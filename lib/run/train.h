// The train tool: BCE-with-logits training of a policy net on legalnet datasets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/model_config.h"
#include "train/process_group_spec.h"

namespace legalnet::run {

struct TrainOptions {
  std::vector<std::string> data;  // training datasets (several files, or a merged one)
  std::vector<std::string> val;   // validation datasets; empty: split `data` by game
  double val_fraction = 0.02;     // share of games held out when `val` is empty
  uint64_t val_max = 20000;       // positions used for each validation pass
  std::string out;                // run folder: model.safetensors, checkpoint.safetensors, metrics.csv, options.json
  nn::ModelConfig model;
  int epochs = 1;
  int64_t max_steps = 0;  // 0: epochs decide
  double max_time = 0;    // seconds of training; 0: no limit
  int batch_size = 256;
  double lr = 2e-3;
  std::string optimizer = "adam";  // adam | adamw | sgd
  double weight_decay = 0;
  double warmup = 0.02;               // share of the steps with a linear warm-up
  double min_lr_ratio = 0.02;         // the cosine decays to lr * min_lr_ratio
  double clip = 1.0;                  // gradient-norm clipping; 0: off
  int max_ply = -1;                   // train only on positions with ply <= max_ply
  int check_weight = 1;               // positions whose side to move is in check appear this often per epoch
  int rare_weight = 1;                // positions with a legal castling or en-passant move appear this often
  std::string data_mode = "auto";     // memory | stream | auto (memory when it fits in half the memory)
  uint64_t shuffle_buffer = 1 << 18;  // positions in the shuffle buffer of stream mode
  uint64_t seed = 0;
  std::string device = "auto";     // auto | cpu | cuda | cuda:N
  std::string precision = "auto";  // auto | fp32 | bf16 (nn/precision.h)
  int threads = 0;                 // 0: all cores
  int64_t eval_every = 1000;       // steps between metric rows
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

struct TrainResult {
  int64_t steps = 0;
  double final_val_loss = 0;
  double precision = 0, recall = 0;
  double samples_per_second = 0;
};

TrainResult run_train(const TrainOptions& options);

// The learning rate at `step` of `total`: linear warm-up, then cosine decay.
double scheduled_lr(const TrainOptions& options, int64_t step, int64_t total);

}  // namespace legalnet::run
