// evaluate's report card by situation, over the rows of its datasets and over position sets
// (FEN/EPD lists: random placements, the perft trees, any list a user brings).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "eval/situations.h"
#include "nn/predict.h"

namespace legalnet::run {

// The draw of the sampled pick of row `row`: its own stream of the evaluation's seed, apart from
// the games' streams (game indices are far below 2^63).
double sampled_pick_uniform(uint64_t seed, uint64_t row);

struct PositionSetOptions {
  float threshold = 0.5f;
  int batch_size = 1024;
  uint64_t seed = 0;
  bool progress = false;
};

// The card of every position of the list at `path` (games/position_list.h).
eval::SituationCard evaluate_position_set(const nn::LoadedModel& model, const std::string& path,
                                          const torch::Device& device, nn::Precision precision,
                                          const PositionSetOptions& options);

// The card as JSON, a member a situation with its counts, rates and 95% intervals.
nlohmann::ordered_json situation_card_json(const eval::SituationCard& card);
// The card as a table on stdout, under `title`.
void print_situation_card(const std::string& title, const nlohmann::ordered_json& card);

}  // namespace legalnet::run
