// RunFolder's side of --resume: the run's options.json against this command line's.
#include <nlohmann/json.hpp>

#include "train/run_folder.h"
#include "util/error.h"
#include "util/files.h"
#include "util/json.h"
#include "util/text.h"

namespace legalnet::train {
namespace {

std::string shown(const nlohmann::json& value) { return json_excerpt(value); }

// Where a kept option's pointer points: "/lr" at the key "lr", "/model/hidden" at "hidden"
// inside the object "model".
struct Place {
  std::string object, key;
};
Place place_of(const std::string& pointer) {
  const size_t last = pointer.rfind('/');
  return {last == 0 ? std::string() : pointer.substr(1, last - 1), pointer.substr(last + 1)};
}

// Refuses other files than the run's (by resolved path), or its files holding other rows.
void check_same_data(const std::string& options_path, const nlohmann::json& run, const nlohmann::json& now,
                     const KeptData& kept) {
  const std::string &key = kept.key, &files_key = kept.files_key, &option = kept.option;
  const nlohmann::json& was = run[files_key];
  const nlohmann::json& is = now[files_key];
  const std::string resumed = " in the run being resumed ('" + options_path + "')";
  // Other files: by their resolved paths (a spelling that names the same file is the same).
  auto path_of = [](const nlohmann::json& entry) {
    return entry.is_object() && entry.contains("path") && entry["path"].is_string() ? entry["path"].get<std::string>()
                                                                                    : std::string();
  };
  bool same_files = was.is_array() && was.size() == is.size();
  for (size_t i = 0; same_files && i < is.size(); ++i) same_files = path_of(was[i]) == path_of(is[i]);
  if (!same_files) {
    std::string detail;
    for (size_t i = 0; i < is.size() && detail.empty(); ++i)
      if (!was.is_array() || i >= was.size() || path_of(was[i]) != path_of(is[i]))
        detail = "'" + printable(path_of(is[i])) + "' is not " +
                 (was.is_array() && i < was.size() ? "'" + printable(path_of(was[i])) + "'"
                                                   : std::string("among its files"));
    if (detail.empty()) detail = "fewer files";
    throw Error("--resume: " + option + " is " + shown(now[key]) + " here but " + shown(run[key]) + resumed +
                ": other files (" + detail + "); resume with the run's data, or start a new run");
  }
  // The same files: they must still hold the rows the run began with.
  for (size_t i = 0; i < is.size(); ++i) {
    if (was[i] == is[i]) continue;
    auto described = [](const nlohmann::json& e) {
      auto field = [&](const char* name) { return e.contains(name) ? shown(e[name]) : std::string("?"); };
      return field("positions") + " positions, " + field("games") + " games, fingerprint " + field("fingerprint");
    };
    throw Error("--resume: " + option + " '" + printable(path_of(is[i])) +
                "' holds other data than when the run began (" + described(is[i]) + " now, " + described(was[i]) +
                resumed + "); resume with the run's data, or start a new run");
  }
}

}  // namespace

void RunFolder::check_resumed_options(const std::string& options_json, const std::vector<KeptOption>& kept,
                                      const std::vector<KeptData>& data) const {
  std::string text;
  try {
    text = read_run_file(options_path(), RunFolder::MAX_OPTIONS_BYTES);
  } catch (const Error& e) {
    throw Error("--resume: " + std::string(e.what()) + "; the run's options cannot be compared");
  }
  nlohmann::json run;
  try {
    run = parse_json(text);
  } catch (const JsonError& e) {
    throw Error(options_path() + ": " + e.what());
  }
  if (!run.is_object()) throw Error(options_path() + ": not a JSON object");
  const nlohmann::json now = nlohmann::json::parse(options_json);
  // Every option this run would record must be there to be compared: a key missing (an
  // options.json edited, emptied, or written before the key existed) is refused, not skipped.
  auto require = [&](const nlohmann::json& was, const std::string& key, const std::string& where) {
    if (!was.contains(key))
      throw Error("--resume: '" + options_path() + "' has no " + where + "'" + key +
                  "' (edited, or written by an earlier legalnet): the run's options cannot be compared; start a new "
                  "run, or replace this one with --force");
  };
  for (const KeptData& d : data) {
    require(run, d.key, "");
    require(run, d.files_key, "");
  }
  for (const KeptOption& k : kept)
    if (const Place p = place_of(k.pointer); p.object.empty() && now.contains(p.key)) require(run, p.key, "");
  for (const KeptOption& k : kept) {
    const Place p = place_of(k.pointer);
    if (p.object.empty() || !now.contains(p.object)) continue;
    require(run, p.object, "");
    if (!run[p.object].is_object()) throw Error(options_path() + ": '" + p.object + "' is not a JSON object");
    // A boolean the run lacks inside an object is false: the model's config writes rules_head,
    // rule_lines, paths and vetoes only when true (nn::ModelConfig::to_json), so that nets without them keep
    // the files of before.
    if (now[p.object].contains(p.key) && !now[p.object][p.key].is_boolean())
      require(run[p.object], p.key, "'" + p.object + "' key ");
  }
  for (const KeptData& d : data) check_same_data(options_path(), run, now, d);
  // Inside an object a boolean either side lacks is false (above).
  auto differs = [&](const nlohmann::json& was, const nlohmann::json& is, const std::string& key,
                     const std::string& option, bool inside) {
    const auto value = [&](const nlohmann::json& j) {
      return j.contains(key) ? j[key] : inside ? nlohmann::json(false) : nlohmann::json();
    };
    const bool compared = is.contains(key) || (inside && was.contains(key) && was[key].is_boolean());
    if (!compared || value(was) == value(is)) return;
    throw Error("--resume: " + option + " is " + shown(value(is)) + " here but " + shown(value(was)) +
                " in the run being resumed ('" + options_path() +
                "'); resume with the run's value, or start a new run");
  };
  for (const KeptOption& k : kept)  // the net's first
    if (const Place p = place_of(k.pointer); !p.object.empty() && now.contains(p.object))
      differs(run[p.object], now[p.object], p.key, k.option, true);
  for (const KeptOption& k : kept)
    if (const Place p = place_of(k.pointer); p.object.empty()) differs(run, now, p.key, k.option, false);
}

std::optional<std::string> RunFolder::recorded(const std::string& key) const {
  try {
    const nlohmann::json run = parse_json(read_run_file(options_path(), RunFolder::MAX_OPTIONS_BYTES));
    if (run.is_object() && run.contains(key) && run[key].is_string()) return run[key].get<std::string>();
  } catch (const std::exception&) {  // check_resumed_options names what is wrong with the file
  }
  return std::nullopt;
}

}  // namespace legalnet::train
