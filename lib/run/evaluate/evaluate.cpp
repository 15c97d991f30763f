// run_evaluate: the wiring of evaluate's stages, each in its own file of run/evaluate/.
#include "run/evaluate/evaluate.h"

#include <filesystem>

#include "run/evaluate/dataset_pass.h"
#include "run/evaluate/gallery.h"
#include "run/evaluate/games_pass.h"
#include "run/evaluate/position_sets.h"
#include "run/evaluate/prediction.h"
#include "run/evaluate/search_pass.h"
#include "run/evaluate/shown_position.h"
#include "run/evaluate/tensorboard_figures.h"
#include "run/model_card.h"
#include "util/error.h"
#include "util/files.h"
#include "util/tool_main.h"

namespace legalnet::run {
namespace {

// Every output writable, none an input, and what the report will hold is text: found now, not
// after the games.
void check_outputs(const EvaluateOptions& o) {
  std::vector<NamedPath> inputs{{"--model", o.model}};
  for (const auto& d : o.data) inputs.push_back({"--data", d});
  for (const auto& p : o.positions) inputs.push_back({"--positions", p});
  for (const auto& p : o.search) inputs.push_back({"--search", p});
  std::vector<NamedPath> outputs{{"--report", o.report}, {"--picture", o.picture}, {"--model-card", o.model_card}};
  // The gallery's pictures replace what lies under their names (a link itself, not what it
  // points to): an input there, or the report or picture, would be lost.
  if (!o.gallery.empty())
    for (NamedPath& picture : gallery_outputs(o.gallery)) outputs.push_back(std::move(picture));
  check_outputs_are_not_inputs(outputs, inputs);
  std::error_code ec;
  if (!o.gallery.empty() && std::filesystem::exists(o.gallery, ec) && !std::filesystem::is_directory(o.gallery, ec))
    throw Error("--gallery '" + o.gallery + "' is a file; it must be a folder");
  check_output_writable({"--report", o.report});
  check_output_writable({"--picture", o.picture});
  check_output_writable({"--model-card", o.model_card});
  if (!o.gallery.empty()) check_output_folder({"--gallery", o.gallery});
  if (!o.report.empty()) check_json_text("the command line", o.command_line, {"--report", o.report});
  if (!o.model_card.empty()) check_json_text("the command line", o.command_line, {"--model-card", o.model_card});
}

}  // namespace

EvaluateReport run_evaluate(const EvaluateOptions& o) {
  check_evaluate_options(o);
  check_outputs(o);
  const std::optional<chess::Position> shown = read_shown_position(o);
  const EvaluatedNet net = load_evaluated_net(o, o.threads);

  EvaluateReport report;
  report.options = o;
  report.model = model_facts(net, o.model);
  report.device = run_device(net, o);
  Outputs outputs;  // the picture, the gallery and the report, renamed together at the end
  eval::Gallery gallery(9, float(o.threshold));
  if (!o.data.empty()) report.dataset = measure_dataset(net, o, gallery);
  for (const auto& path : o.positions) report.position_sets.push_back({path, evaluate_position_set(net, path, o)});
  if (o.games > 0) report.games = play_evaluation_games(net, o, o.opponent, o.games, gallery);
  for (const auto& path : o.search) report.searches.push_back(search_from_list(net, path, o));
  if (o.adversary_games > 0)
    report.adversary_games = play_evaluation_games(net, o, Opponent::ADVERSARY, o.adversary_games, gallery);
  if (shown) report.position = show_position(net, *shown, o, outputs);
  report.gallery = gallery.groups();
  if (!o.gallery.empty()) write_gallery(report.gallery, o.gallery, outputs);
  report.print();
  const nlohmann::ordered_json figures = report.json();  // report.json's and the card's
  if (!o.report.empty()) {
    auto out = std::make_unique<OutputFile>(o.report);
    out->write(EvaluateReport::json_text(figures));
    outputs.add(std::move(out));
  }
  if (!o.model_card.empty()) {
    auto out = std::make_unique<OutputFile>(o.model_card);
    out->write(model_card(figures["model"]["training"], &figures));
    outputs.add(std::move(out));
  }
  // A run folder's model: its figures at the model's step in the run's TensorBoard events.
  add_tensorboard_figures(report, outputs);
  flush_stdout();  // the table reached its reader, or no output takes its name
  // Every output is complete: only now does any of them take its name.
  outputs.commit();
  return report;
}

}  // namespace legalnet::run
