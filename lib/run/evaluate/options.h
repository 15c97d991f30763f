// evaluate's options: the struct a run reads and the one table (util/option_table.h) that
// declares every flag, its help, range and default, and the keys report.json's "options" records;
// beside it --help's text and the checks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compute/choices.h"
#include "eval/games.h"
#include "util/choices.h"
#include "util/option_table_fwd.h"

namespace legalnet::run {

// Who the model plays in --games (eval/games.h): a uniform random mover, itself on both sides, or
// the adversary that hunts for its mistakes; by name, --opponent and report.json's "opponent".
using eval::Opponent;
inline constexpr std::array<Choice<Opponent>, 3> OPPONENTS{{
    {Opponent::RANDOM, "random"},
    {Opponent::SELF, "self"},
    {Opponent::ADVERSARY, "adversary"},
}};

struct EvaluateOptions {
  std::string model;                   // the model file (not an architecture, as train's --arch)
  std::vector<std::string> data;       // held-out datasets (other seeds than the training data)
  std::vector<std::string> positions;  // FEN/EPD lists measured by situation (--positions)
  uint64_t max_positions = 20000;      // 0: all
  float threshold = 0.5f;
  int games = 0;
  Opponent opponent = Opponent::RANDOM;
  int adversary_games = 0;          // more games, against the adversary, reported beside --games'
  std::vector<std::string> search;  // FEN/EPD lists whose positions start a search for wrong sets
  int search_starts = 80;           // starts drawn from each list
  int search_budget = 2000;         // evaluations per start, hill climbing the worst margin
  int random_edit_budget = 800;     // the same starts by random legal edits (0: none)
  bool greedy = false;
  bool resample_illegal = true;
  int max_plies = 0;
  uint64_t seed = 0;
  std::string report;      // JSON report path
  std::string model_card;  // MODEL_CARD.md with the training record and these figures (run/model_card.h)
  std::string fen;         // one position to show
  int top_k = 10;
  std::string picture;  // .svg or .png of --fen
  std::string gallery;  // folder for the boards of the model's mistakes (one .svg a group)
  std::string device = "auto";
  nn::Precision compute_precision = nn::Precision::AUTO;  // --precision (compute/choices.h)
  int threads = 0;
  nn::Kernels kernels = nn::Kernels::AUTO;  // --kernels (compute/choices.h)
  int batch_size = 1024;
  bool quiet = false;
  bool uci = false;  // a UCI engine on stdin and stdout instead (run/evaluate/uci.h)
  std::string command_line;
};

// --help's opening paragraph.
extern const char* const EVALUATE_ABOUT;

// Every option of evaluate, in --help's order. record() gives report.json's "options" given the
// facts "max_plies", "device", "compute_precision", "kernels" and (with --device auto on a CPU)
// "device_note".
const options::Table<EvaluateOptions>& evaluate_options();

// The checks of a run's options, the table's ranges (validate()) and those across options (a
// model, some work, --picture with --fen), before any file is read: throws legalnet::Error
// naming the option. The outputs are checked by the run.
void check_evaluate_options(const EvaluateOptions& options);

}  // namespace legalnet::run
