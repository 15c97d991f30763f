// MODEL_CARD.md: what a trained model is, in a page a person reads beside the file (the Hugging
// Face convention): the recipe, the data, the inputs, the machine and time it trained on, what
// evaluate measured where it has, and the known limits. train writes it into the run folder;
// evaluate --model-card writes it again with its figures. Both read the same facts the model
// file's metadata holds ("training": options.json's keys and the run's totals), so a copied or
// exported model explains itself.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace legalnet::run {

// The card's Markdown from the model's training record and, when not null, evaluate's
// report.json (its "games", "adversary_games", "dataset" and "position_sets").
std::string model_card(const nlohmann::ordered_json& training, const nlohmann::ordered_json* evaluation);

}  // namespace legalnet::run
