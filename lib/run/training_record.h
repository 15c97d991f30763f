// A training run's record in two parts: what decides the net (the options, the data's
// fingerprints and sizes, the steps, the machine: the model file's "training" metadata, so that
// the same options and data give the same model file byte for byte), and its provenance (the
// command line, the paths as spelled, legalnet's version, the seconds it took: options.json,
// beside the model in its run folder). MODEL_CARD.md and evaluate's report read both.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace legalnet::run {

// `full` (options.json's record with the run's totals) without its provenance.
nlohmann::ordered_json model_record(const nlohmann::ordered_json& full);

// The model's record with the provenance of the run folder the model lies in: the keys of
// `model_path`'s sibling options.json when that file's record is this model's (its
// model_record equals `record`); `record` alone otherwise (a copied or exported model, a
// folder trained again since, an unreadable file).
nlohmann::ordered_json with_provenance(const nlohmann::ordered_json& record, const std::string& model_path);

}  // namespace legalnet::run
