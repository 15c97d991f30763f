// The net an evaluation measures, on the device and in the arithmetic the options resolve to:
// every pass (dataset, rare moves, position sets, games, --fen) asks it through here.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "chess/position.h"
#include "compute/arithmetic.h"
#include "compute/choices.h"
#include "nn/model_file.h"
#include "run/evaluate/options.h"
#include "run/evaluate/report.h"

namespace legalnet::run {

struct EvaluatedNet {
  nn::LoadedModel model;
  torch::Device device = torch::kCPU;
  nn::Precision precision = nn::Precision::FP32;
  nn::Kernels kernels = nn::Kernels::TORCH;  // what a resnet's 3x3 convolutions run on (--kernels)

  // The sigmoid outputs of each position in board order, encode::MOVE_INDICES a position (nn::predict);
  // with bce_sum, adds their summed BCE against the legal moves.
  std::vector<float> predict(const std::vector<const chess::Position*>& positions, double* bce_sum = nullptr) const;
  std::vector<float> predict(const std::vector<chess::Position>& positions, double* bce_sum = nullptr) const;
};

// Resolves --device, --precision and --kernels as train does for the net, sets `threads` threads
// (0: torch's default) and loads --model, ready to predict: the one loading sequence of
// evaluate's passes and of --uci.
EvaluatedNet load_evaluated_net(const EvaluateOptions& options, int threads);

// The model file's facts and the resolved device, for the report.
ModelFacts model_facts(const EvaluatedNet& net, const std::string& model_path);
RunDevice run_device(const EvaluatedNet& net, const EvaluateOptions& options);

}  // namespace legalnet::run
