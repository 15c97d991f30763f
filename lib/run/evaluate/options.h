// evaluate's options: the struct a run reads and the one table (util/option_table.h) that
// declares every flag, its help, range and default, and the keys report.json's "options" records.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nn/kernels_choice.h"
#include "nn/precision_choice.h"
#include "util/option_table.h"

namespace legalnet::run {

// Who the model plays in --games: a uniform random mover, or itself on both sides.
enum class Opponent { RANDOM, SELF };

struct OpponentSpec {
  Opponent value;
  const char* name;  // --opponent, and report.json's "opponent"
};

inline constexpr std::array<OpponentSpec, 2> OPPONENTS{{
    {Opponent::RANDOM, "random"},
    {Opponent::SELF, "self"},
}};

struct EvaluateOptions {
  std::string model;                   // the model file (not an architecture, as train's --arch)
  std::vector<std::string> data;       // held-out datasets (other seeds than the training data)
  std::vector<std::string> positions;  // FEN/EPD lists measured by situation (--positions)
  uint64_t max_positions = 20000;      // 0: all
  float threshold = 0.5f;
  int games = 0;
  Opponent opponent = Opponent::RANDOM;
  bool greedy = false;
  bool resample_illegal = true;
  int max_plies = 0;
  uint64_t seed = 0;
  std::string report;  // JSON report path
  std::string fen;     // one position to show
  int top_k = 10;
  std::string picture;  // .svg or .png of --fen
  std::string gallery;  // folder for the boards of the model's mistakes (one .svg a group)
  std::string device = "auto";
  nn::Precision compute_precision = nn::Precision::AUTO;  // --precision (nn/precision_choice.h)
  int threads = 0;
  nn::Kernels kernels = nn::Kernels::AUTO;  // --kernels (nn/kernels_choice.h)
  int batch_size = 1024;
  bool quiet = false;
  bool uci = false;  // a UCI engine on stdin and stdout instead (run/evaluate/uci.h)
  std::string command_line;
};

// Every option of evaluate, in --help's order. record() gives report.json's "options" given the
// facts "max_plies", "device", "compute_precision", "kernels" and (with --device auto on a CPU)
// "device_note".
const options::Table<EvaluateOptions>& evaluate_options();

// The checks of a run's options beyond each one's range (validate() runs those): a model, some
// work, --picture with --fen. Throws legalnet::Error naming the option.
void check_evaluate_options(const EvaluateOptions& options);

}  // namespace legalnet::run
