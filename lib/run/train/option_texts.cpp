#include "run/train/option_texts.h"

#include <fmt/core.h>

#include "chess/situations.h"
#include "nn/model_config.h"
#include "run/train/schedule.h"
#include "train/training_data.h"
#include "util/error.h"

namespace legalnet::run {

std::string architectures_help() {
  std::string help = "The architecture (docs/train.md):";
  for (const nn::ModelSpec& spec : nn::MODEL_SPECS) help += fmt::format(" {}, {};", spec.name, spec.description);
  help.back() = '.';
  return help;
}

std::string learning_rate_help() {
  std::string help = "Peak learning rate; 0 or left out: the architecture's (";
  for (const nn::ModelSpec& row : nn::MODEL_SPECS) {
    help += fmt::format("{} {:g}", row.name, row.lr);
    if (row.lr_steps > 0)
      help += fmt::format(
          " for {1} steps of {0} rows; x sqrt(rows a step/{0}) for another batch, and x ({1} x "
          "{0}/(max-steps x rows a step))^{2:g} up to {3:g}x for a shorter schedule",
          LR_BATCH, row.lr_steps, SHORT_SCHEDULE_POWER, SHORT_SCHEDULE_MAX);
    help += ", ";
  }
  help.replace(help.size() - 2, 2, ")");
  return help + fmt::format("; with --mixing rays {:g}x that", nn::RAYS_LR_SHARE);
}

std::string situation_weight_help() {
  std::string names;
  for (const chess::SituationSpec& s : chess::SITUATIONS) names.append(names.empty() ? "" : ", ").append(s.name);
  return fmt::format(
      "Positions in situation NAME appear W times per epoch (W in 1..{}), e.g. many_queens=4 or "
      "in_check=8,promotion=2; NAME: {} (where this and --check-weight, --rare-weight or --pin-weight weight one "
      "situation, the larger weight wins)",
      train::MAX_ROW_WEIGHT, names);
}

// --situation-weight's text checked by the parser (the message without the option, which CLI11 adds).
CLI::Validator situation_weights() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)train::RowWeights::parse(text);
          return {};
        } catch (const Error& e) {
          return e.what();
        }
      },
      "NAME=W[,NAME=W...]");
}

}  // namespace legalnet::run
