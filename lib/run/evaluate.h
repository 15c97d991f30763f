// The evaluate tool: a trained model measured on a held-out dataset and in games.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/precision_choice.h"

namespace legalnet::run {

struct EvaluateOptions {
  std::string model;
  std::vector<std::string> data;   // held-out datasets (other seeds than the training data)
  std::vector<std::string> positions;  // FEN/EPD lists measured by situation (--positions)
  uint64_t max_positions = 20000;  // 0: all
  float threshold = 0.5f;
  int games = 0;
  std::string opponent = "random";  // random | self
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
  int batch_size = 1024;
  bool quiet = false;
  bool uci = false;  // a UCI engine on stdin and stdout instead (run/uci.h)
  std::string command_line;
};

// Runs the evaluation, prints the table on stdout, writes the report; returns the report JSON.
std::string run_evaluate(const EvaluateOptions& options);

}  // namespace legalnet::run
