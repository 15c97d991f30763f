#include "run/position_sets.h"

#include <fmt/core.h>

#include "chess/movegen.h"
#include "encode/encode.h"
#include "games/position_list.h"
#include "util/progress.h"
#include "util/rng.h"

namespace legalnet::run {

using nlohmann::ordered_json;

double sampled_pick_uniform(uint64_t seed, uint64_t row) {
  GameRng rng(seed, (uint64_t(1) << 63) | row);
  return rng.uniform();
}

eval::SituationCard evaluate_position_set(const nn::LoadedModel& model, const std::string& path,
                                          const torch::Device& device, nn::Precision precision,
                                          const PositionSetOptions& o) {
  const std::vector<std::string> fens = read_position_list(path);
  eval::SituationCard card;
  Progress progress("positions", fens.size(), o.progress);
  for (size_t start = 0; start < fens.size(); start += size_t(o.batch_size)) {
    const size_t count = std::min(size_t(o.batch_size), fens.size() - start);
    std::vector<chess::Position> positions;
    positions.reserve(count);
    for (size_t i = 0; i < count; ++i) positions.emplace_back(fens[start + i]);
    std::vector<const chess::Position*> pointers;
    for (const auto& p : positions) pointers.push_back(&p);
    const std::vector<float> probs = nn::predict(model, pointers, device, precision);
    for (size_t i = 0; i < count; ++i)
      card.add(positions[i], chess::MoveList(positions[i]), &probs[i * encode::MOVE_INDICES], o.threshold,
               sampled_pick_uniform(o.seed, start + i));
    progress.update(start + count);
  }
  progress.finish();
  return card;
}

namespace {
ordered_json pair_json(std::pair<double, double> p) { return {p.first, p.second}; }
}  // namespace

ordered_json situation_card_json(const eval::SituationCard& card) {
  ordered_json j;
  for (int s = 0; s < eval::SITUATION_NB; ++s) {
    const eval::SituationRow& r = card.rows[size_t(s)];
    j[eval::situation_name(s)] = {{"positions", r.positions},
                                  {"exact_sets", r.exact_sets},
                                  {"exact_set_accuracy", r.exact().value()},
                                  {"exact_set_95ci", pair_json(r.exact().interval())},
                                  {"mean_illegal_mass", r.mean_illegal_mass()},
                                  {"illegal_mass_95ci", pair_json(r.illegal_mass_interval())},
                                  {"sampled_picks", r.sampled_illegal.total},
                                  {"sampled_illegal_picks", r.sampled_illegal.count},
                                  {"sampled_illegal_rate", r.sampled_illegal.value()},
                                  {"sampled_illegal_95ci", pair_json(r.sampled_illegal.interval())}};
  }
  return j;
}

void print_situation_card(const std::string& title, const ordered_json& card) {
  fmt::print("\n{}\n", title);
  fmt::print("  {:<36} {:>9} {:>22} {:>10} {:>22}\n", "situation", "positions", "exact sets (95%)",
             "illegal mass", "sampled illegal (95%)");
  for (const auto& [name, r] : card.items()) {
    if (r["positions"].get<uint64_t>() == 0) {
      fmt::print("  {:<36} {:>9}\n", name, 0);
      continue;
    }
    auto pct = [](const ordered_json& v, const ordered_json& ci, int digits) {
      return fmt::format("{:.{}f}% ({:.{}f}-{:.{}f})", 100 * v.get<double>(), digits, 100 * ci[0].get<double>(),
                         digits, 100 * ci[1].get<double>(), digits);
    };
    const bool picks = r["sampled_picks"].get<uint64_t>() > 0;
    fmt::print("  {:<36} {:>9} {:>22} {:>9.3f}% {:>22}\n", name, r["positions"].get<uint64_t>(),
               pct(r["exact_set_accuracy"], r["exact_set_95ci"], 2), 100 * r["mean_illegal_mass"].get<double>(),
               picks ? pct(r["sampled_illegal_rate"], r["sampled_illegal_95ci"], 3) : std::string("-"));
  }
}

}  // namespace legalnet::run
