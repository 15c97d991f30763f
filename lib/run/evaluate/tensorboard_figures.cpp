#include "run/evaluate/tensorboard_figures.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>

#include "run/training_record.h"
#include "train/run_folder.h"
#include "util/console.h"
#include "util/json.h"
#include "util/text.h"

namespace legalnet::run {
namespace {

namespace tb = train::tensorboard;

// A name as one part of a tag: lower-case letters, digits, '-' and '_' ("castling refused
// (attacked square)" is "castling_refused_attacked_square"), never empty.
std::string tag_part(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool kept = std::isalnum(uint8_t(c)) || c == '-';
    if (kept)
      out += char(std::tolower(uint8_t(c)));
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "_" : out;
}

void add_games(const eval::GamesSummary& g, const std::string& prefix, std::vector<tb::Scalar>& out) {
  out.push_back({"eval/" + prefix + "clean_games", float(g.clean_games().value())});
  out.push_back({"eval/" + prefix + "illegal_pick_rate", float(g.illegal_picks().value())});
  if (g.illegal_picks_in_check().total > 0)
    out.push_back({"eval/" + prefix + "illegal_pick_rate_in_check", float(g.illegal_picks_in_check().value())});
}

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The largest evaluate events file read back: a few hundred bytes an evaluation.
constexpr uint64_t MAX_EVENTS_BYTES = uint64_t(1) << 26;

}  // namespace

const std::vector<std::string>& headline_tags() {
  static const std::vector<std::string> tags{"eval/clean_games", "eval/illegal_pick_rate", "eval/adversary_clean_games",
                                             "eval/adversary_illegal_pick_rate", "eval/exact_sets"};
  return tags;
}

std::vector<tb::Scalar> tensorboard_scalars(const EvaluateReport& r) {
  std::vector<tb::Scalar> out;
  if (r.games) add_games(*r.games, "", out);
  if (r.adversary_games) add_games(*r.adversary_games, "adversary_", out);
  if (r.dataset && r.dataset->anatomy.positions > 0)
    out.push_back(
        {"eval/exact_sets", float(Proportion{r.dataset->anatomy.exact_sets, r.dataset->anatomy.positions}.value())});
  std::map<std::string, int> seen;  // two lists of one name: the second is SET_2
  for (const PositionSetFigures& set : r.position_sets) {
    const std::string file = std::filesystem::path(set.path).filename().string();
    const size_t dot = file.find('.');
    std::string name = tag_part(dot == 0 || dot == std::string::npos ? file : file.substr(0, dot));
    if (const int n = ++seen[name]; n > 1) name += fmt::format("_{}", n);
    const eval::SituationRow& row = set.situations.rows[eval::WITH_LEGAL_MOVE];
    if (row.positions == 0) continue;
    out.push_back({"eval/exact_sets/" + name, float(row.exact().value())});
    out.push_back({"eval/illegal_mass/" + name, float(row.mean_illegal_mass())});
  }
  if (r.dataset)
    for (int s = 0; s < eval::SITUATION_NB; ++s) {
      const eval::SituationRow& row = r.dataset->situations.rows[size_t(s)];
      if (row.positions == 0) continue;
      const std::string tag = "situations/" + tag_part(eval::situation_label(s));
      out.push_back({tag + "/exact", float(row.exact().value())});
      out.push_back({tag + "/illegal_mass", float(row.mean_illegal_mass())});
    }
  return out;
}

std::string model_run_folder(const EvaluateReport& r) {
  const std::filesystem::path model(r.options.model);
  if (model.filename() != "model.safetensors") return "";
  const std::string folder = model.parent_path().empty() ? "." : model.parent_path().string();
  struct stat st;
  const std::string events = folder + "/" + train::RunFolder::EVENTS_FILE;
  if (lstat(events.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  const nlohmann::ordered_json& record = r.model.training;
  if (!record.is_object() || !record.contains("steps_done") || !record["steps_done"].is_number_integer() ||
      record["steps_done"].get<int64_t>() < 1)
    return "";
  try {  // options.json by the run-file rules, as the record's provenance is read (run/training_record.h)
    const auto full = parse_json<nlohmann::ordered_json>(read_run_file(folder + "/options.json", uint64_t(1) << 24));
    if (!full.is_object() || nlohmann::json(model_record(full)) != nlohmann::json(model_record(record))) return "";
  } catch (const std::exception&) {
    return "";
  }
  return folder;
}

std::string add_tensorboard_figures(const EvaluateReport& r, Outputs& outputs) {
  const std::vector<tb::Scalar> scalars = tensorboard_scalars(r);
  if (scalars.empty()) return "";
  const std::string folder = model_run_folder(r);
  if (folder.empty()) return "";
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    if (!r.options.quiet)
      say("evaluate: note: the run folder '{}' is not writable: its TensorBoard events get no figures\n",
          printable(folder));
    return "";
  }
  const int64_t step = r.model.training["steps_done"].get<int64_t>();
  const std::string path = folder + "/" + train::RunFolder::EVALUATE_EVENTS_FILE;
  const double now = wall_time();
  // The earlier evaluations' records, at earlier steps (the file is written in step order);
  // none when there is no file, or none to keep (a link, never followed: it is replaced).
  std::string kept;
  try {
    const std::string file = read_run_file(path, MAX_EVENTS_BYTES);
    kept = file.substr(0, tb::records_through_step(file, step - 1));
  } catch (const std::exception&) {
  }
  if (kept.empty()) kept = tb::record(tb::file_version_event(now));
  std::vector<std::string> values;
  for (const tb::Scalar& s : scalars) values.push_back(tb::scalar_value(s));
  values.push_back(tb::text_value("eval/command_line", "```\n" + printable(r.options.command_line, 1 << 16) + "\n```"));
  auto out = std::make_unique<OutputFile>(path, Links::REPLACE);
  out->write(kept + tb::record(tb::summary_event(now, step, values)));
  outputs.add(std::move(out));
  return path;
}

}  // namespace legalnet::run
