#include "run/model_card.h"

#include <fmt/core.h>

#include <filesystem>

#include "util/machine.h"

namespace legalnet::run {
namespace {

using json = nlohmann::ordered_json;

// A value of `j` at a JSON pointer as text ("-" when absent), numbers as they print.
std::string at(const json& j, const char* pointer) {
  const json::json_pointer p(pointer);
  if (!j.contains(p)) return "-";
  const json& v = j.at(p);
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string percent(double share, int digits) { return fmt::format("{:.{}f}%", 100 * share, digits); }

std::string interval(const json& ci, int digits) {
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) return "";
  return fmt::format(" ({:.{}f}-{:.{}f}%)", 100 * ci[0].get<double>(), digits, 100 * ci[1].get<double>(), digits);
}

void recipe(const json& t, std::string& md) {
  md += "## Recipe\n\n| option | value |\n|---|---|\n";
  for (const auto& [name, pointer] :
       std::initializer_list<std::pair<const char*, const char*>>{{"architecture", "/model_description"},
                                                                  {"inputs", "/input_kind"},
                                                                  {"policy head", "/model/policy_head"},
                                                                  {"batch size (per process)", "/batch_size"},
                                                                  {"peak learning rate", "/lr"},
                                                                  {"steps", "/steps_done"},
                                                                  {"in-check / rare / pin weights", ""},
                                                                  {"situation weights", "/situation_weight"},
                                                                  {"seed", "/seed"},
                                                                  {"arithmetic", "/compute_precision"},
                                                                  {"kernels", "/kernels"},
                                                                  {"processes", "/processes"}}) {
    std::string value = *pointer
                            ? at(t, pointer)
                            : at(t, "/check_weight") + " / " + at(t, "/rare_weight") + " / " + at(t, "/pin_weight");
    if (value.empty()) value = "none";  // --situation-weight left out
    md += fmt::format("| {} | {} |\n", name, value);
  }
  if (t.contains("command_line")) md += fmt::format("\nThe command: `{}`. ", at(t, "/command_line"));
  md += "Every option is in the run's options.json and in the model file's `training` metadata.\n\n";
}

void data(const json& t, std::string& md) {
  md += "## Data\n\n";
  md += fmt::format("{} training positions and {} validation positions", at(t, "/train_positions"),
                    at(t, "/val_positions"));
  if (t.contains("data_files") && t["data_files"].is_array()) {
    md += ", from:\n\n";
    for (const json& f : t["data_files"])
      md += fmt::format("- `{}`: {} rows, {} games\n",
                        f.contains("path") ? at(f, "/path") : "fingerprint " + at(f, "/fingerprint"),
                        at(f, "/positions"), at(f, "/games"));
    md += "\n";
  } else {
    md += ".\n\n";
  }
}

void training_facts(const json& t, std::string& md) {
  md += "## Training\n\n";
  // The minutes and the version are the run folder's (run/training_record.h): absent for a model
  // copied out of it.
  const std::string minutes =
      t.contains("train_seconds") ? fmt::format(" in {:.1f} minutes", t.value("train_seconds", 0.0) / 60) : "";
  const std::string version = t.contains("version") ? " (legalnet " + at(t, "/version") + ")" : "";
  md += fmt::format("{} steps ({} samples){} on {}, {}{}.\n", at(t, "/steps_done"), at(t, "/samples_seen"), minutes,
                    at(t, "/machine/device"), at(t, "/machine/cpu"), version);
  md += fmt::format("Validation loss at the end: {}.\n\n", at(t, "/final_val_loss"));
}

void games_row(const json& g, const char* against, std::string& md) {
  if (!g.is_object()) return;
  md += fmt::format("| games vs {} ending by the rules with no illegal pick | {}{} | {} games |\n", against,
                    percent(g.value("clean_games_share", 0.0), 1), interval(g.value("clean_games_95ci", json()), 1),
                    at(g, "/games"));
  md += fmt::format("| illegal picks vs {} | {}{} | {} of {} picks |\n", against,
                    percent(g.value("illegal_rate_per_pick", 0.0), 4),
                    interval(g.value("illegal_rate_95ci", json()), 4), at(g, "/illegal_picks"), at(g, "/model_picks"));
}

void evaluation(const json* r, std::string& md) {
  md += "## Evaluation\n\n";
  if (!r) {
    md +=
        "Not measured yet: `evaluate --model model.safetensors --model-card MODEL_CARD.md ...` writes the "
        "figures here (`make -f Makefile.pipeline all` does).\n\n";
    return;
  }
  md += fmt::format(
      "Measured by `{}` on {} ({}; legalnet {}).\n\n| figure | value (95% interval) | over |\n"
      "|---|---|---|\n",
      at(*r, "/command_line"), at(*r, "/options/device"), cpu_description(), at(*r, "/version"));
  if (r->contains("games")) games_row((*r)["games"], at(*r, "/games/opponent").c_str(), md);
  if (r->contains("adversary_games")) games_row((*r)["adversary_games"], "the adversary", md);
  if (r->contains("dataset")) {
    const json& d = (*r)["dataset"];
    md += fmt::format("| exact legal sets, held-out rows | {}{} | {} rows |\n",
                      percent(d.value("exact_set_accuracy", 0.0), 3), interval(d.value("exact_set_95ci", json()), 3),
                      at(d, "/positions"));
  }
  if (r->contains("position_sets") && (*r)["position_sets"].is_array())
    for (const json& s : (*r)["position_sets"]) {
      const json card = s.value("situations", json::object()).value("with a legal move", json::object());
      const std::string name = std::filesystem::path(s.value("path", std::string())).filename().string();
      // The wrong sets counted: on a whole class the target is none, which 100.000% may hide.
      const json positions = card.value("positions", json()), exact = card.value("exact_sets", json());
      const std::string wrong = positions.is_number_unsigned() && exact.is_number_unsigned() && positions >= exact
                                    ? fmt::format("{}", positions.get<uint64_t>() - exact.get<uint64_t>())
                                    : "?";
      md += fmt::format("| exact legal sets, {} | {}{} | {} positions, {} wrong |\n", name,
                        percent(card.value("exact_set_accuracy", 0.0), 3),
                        interval(card.value("exact_set_95ci", json()), 3), at(card, "/positions"), wrong);
    }
  md += "\n";
}

}  // namespace

std::string model_card(const json& training, const json* report) {
  std::string md = fmt::format("# {} ({} inputs)\n\n", at(training, "/model_description"), at(training, "/input_kind"));
  md +=
      "A legalnet policy net: shown a chess position, it gives each of the 4,096 from-to moves the "
      "probability that the move is legal there. It learned the rules from positions of random games "
      "by binary cross-entropy; it is a legality model, not a player.\n\n";
  recipe(training, md);
  data(training, md);
  training_facts(training, md);
  evaluation(report, md);
  md +=
      "## Known limits\n\n"
      "- It predicts which moves are legal, not which are good: as a player it is a random mover among the "
      "moves it deems legal.\n"
      "- It sees one position, not the game: threefold repetition and the fifty-move rule, which end games "
      "but are not about legality, are not its job.\n"
      "- Its figures hold for the sets above; an opponent that hunts for its mistakes, and boards unlike its "
      "training data, find more (the adversary's row).\n";
  if (at(training, "/input_kind_from_move_generator") == "true")
    md += "- ENGINE-ASSISTED: its inputs include planes computed by a move generator.\n";
  return md;
}

}  // namespace legalnet::run
