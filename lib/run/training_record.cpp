#include "run/training_record.h"

#include <filesystem>

#include "util/files.h"

namespace legalnet::run {

using json = nlohmann::ordered_json;

namespace {

// What varies between runs that train the same net: how it was asked for, where its files were,
// which build ran, and how long it took.
constexpr const char* PROVENANCE[] = {"command_line", "version", "data", "val", "train_seconds"};
constexpr const char* FILE_LISTS[] = {"data_files", "val_files"};

// The run's totals, which train appends to the options when the run ends: last, in this order.
constexpr const char* TOTALS[] = {"steps_done", "samples_seen", "train_seconds", "final_val_loss"};

// The options in sorted order, then the totals: the order the model files have always had.
json canonical(const json& full) {
  json totals = json::object();
  nlohmann::json options = full;  // sorted
  for (const char* key : TOTALS)
    if (options.contains(key)) {
      totals[key] = full.at(key);
      options.erase(key);
    }
  json out = options;
  for (auto& [key, value] : totals.items()) out[key] = value;
  return out;
}

}  // namespace

json model_record(const json& full) {
  json record = canonical(full);
  for (const char* key : PROVENANCE) record.erase(key);
  for (const char* list : FILE_LISTS)
    if (record.contains(list) && record[list].is_array())
      for (json& file : record[list])
        if (file.is_object()) file.erase("path");
  return record;
}

json with_provenance(const json& record, const std::string& model_path) {
  const std::filesystem::path options = std::filesystem::path(model_path).parent_path() / "options.json";
  try {
    json full = json::parse(read_run_file(options.string(), uint64_t(1) << 24));
    if (!full.is_object() || nlohmann::json(model_record(full)) != nlohmann::json(record)) return record;
    return canonical(full);  // in the model record's order
  } catch (const std::exception&) {
    return record;  // none there, or not a run's file (read_run_file's rules): the model's record stands alone
  }
}

}  // namespace legalnet::run
