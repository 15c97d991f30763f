// What an evaluation measured, as its stages produced it: report.json (json()) and the terminal
// table (print()) are both written from this one struct, never one from the other.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "eval/anatomy.h"
#include "eval/gallery.h"
#include "eval/games.h"
#include "eval/position_search.h"
#include "eval/situations.h"
#include "run/evaluate/options.h"

namespace legalnet::run {

// The model file's facts (report.json's "model").
struct ModelFacts {
  std::string description;        // "resnet 1x8"
  nlohmann::ordered_json config;  // the file's config, as stored
  std::string input_kind;
  bool input_kind_from_move_generator = false;  // engine-assisted inputs
  std::string input_kind_description;
  int64_t parameters = 0;
  nlohmann::ordered_json training;  // the file's record of its training, as stored
};

// Where the net ran: the device, arithmetic and kernels --device, --precision and --kernels
// resolved to.
struct RunDevice {
  std::string device;               // "cpu", "cuda:0"
  std::string precision;            // "fp32", "bf16", ...
  std::string kernels;              // "torch", "board" (--kernels resolved)
  std::optional<std::string> note;  // with --device auto on a CPU: why not CUDA
};

// The dataset pass (--data).
struct DatasetFigures {
  eval::Anatomy anatomy;      // over the first anatomy.positions rows of the rows_in_data
  uint64_t rows_in_data = 0;  // all rows of the --data files
  double bce = 0;
  double inference_seconds = 0;
  eval::Anatomy rare;              // the positions of every row with a legal castling or en-passant move
  uint64_t scanned = 0;            // the rows the rare kinds were counted over: all of them
  eval::SituationCard situations;  // over the measured rows
};

// One --positions list's card.
struct PositionSetFigures {
  std::string path;
  eval::SituationCard situations;
};

// One --search list's figures.
struct SearchFigures {
  std::string path;
  eval::SearchSummary search;                       // hill climbing, --search-budget a start
  std::optional<eval::SearchSummary> random_edits;  // --random-edit-budget a start
};

// --fen: the model's top moves in the position.
struct ShownMove {
  int index = 0;  // encode/encode.h's move index
  float probability = 0;
  bool legal = false;
};
struct ShownPosition {
  std::string fen;
  std::vector<ShownMove> top_moves;
};

// How the model's moves in games are drawn (report.json's games.sampling).
inline const char* sampling_name(bool greedy) { return greedy ? "greedy" : "multinomial over sigmoid outputs"; }

struct EvaluateReport {
  EvaluateOptions options;
  ModelFacts model;
  RunDevice device;
  std::optional<DatasetFigures> dataset;
  std::vector<PositionSetFigures> position_sets;
  std::optional<eval::GamesSummary> games;            // played as options.opponent, greedy, resample_illegal say
  std::optional<eval::GamesSummary> adversary_games;  // --adversary-games: the same against the adversary
  std::vector<SearchFigures> searches;                // --search, a list each
  std::optional<ShownPosition> position;
  std::vector<eval::MistakeGroup> gallery;

  // report.json: provenance, the model, the options (evaluate_options().record()), each pass's figures.
  nlohmann::ordered_json json() const;
  // report.json's text (run/report_file.h's report_text, as every tool's report).
  std::string json_text() const { return json_text(json()); }
  static std::string json_text(const nlohmann::ordered_json& report);
  // The terminal table on stdout: the model, the headline, then each pass's figures.
  void print() const;
};

}  // namespace legalnet::run
