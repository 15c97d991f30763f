// MODEL_CARD.md: what a trained model is, in a page a person reads beside the file (the Hugging
// Face convention): the recipe, the data, the inputs, the machine and time it trained on, what
// evaluate measured where it has, and the known limits. train writes it into the run folder;
// evaluate --model-card writes it again with its figures. Both read the run's record: the model
// file's "training" metadata and, in the run folder, options.json's provenance
// (run/training_record.h), so a copied or exported model still explains itself.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace legalnet::run {

// The card's Markdown from the model's training record and, when not null, evaluate's
// report.json (its "games", "adversary_games", "dataset" and "position_sets").
std::string model_card(const nlohmann::ordered_json& training, const nlohmann::ordered_json* evaluation);

}  // namespace legalnet::run
