// report.json from the EvaluateReport: each pass's figures under its key, in the order a reader
// meets them (the model, the options, the dataset, the position sets, the games, --fen, the gallery).
#include "run/evaluate/report.h"

#include "encode/encode.h"
#include "run/report_file.h"
#include "util/option_table.h"
#include "util/provenance.h"
#include "util/stats.h"

#include <algorithm>

namespace legalnet::run {
namespace {

using nlohmann::ordered_json;

ordered_json pair_json(std::pair<double, double> p) { return {p.first, p.second}; }

ordered_json counts_json(const Counts& c) {
  return {
      {"recall", c.recall()}, {"precision", c.precision()}, {"legal_moves", c.legal()}, {"predicted", c.predicted()}};
}

// A card as JSON, a member a situation with its counts, rates and 95% intervals.
ordered_json situation_card_json(const eval::SituationCard& card) {
  ordered_json j;
  for (int s = 0; s < eval::SITUATION_NB; ++s) {
    const eval::SituationRow& r = card.rows[size_t(s)];
    j[eval::situation_label(s)] = {{"positions", r.positions},
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

// The anatomy's breakdowns: by kind of move, false positives by reason, illegal mass by position.
void add_breakdowns(const eval::Anatomy& a, ordered_json& j) {
  ordered_json kinds;
  for (int k = 0; k < eval::MOVE_KIND_NB; ++k) kinds[eval::move_kind_name(k)] = counts_json(a.by_kind[size_t(k)]);
  j["by_move_kind"] = kinds;
  ordered_json reasons;
  uint64_t fp = 0;
  for (auto n : a.false_positives) fp += n;
  for (int r = 0; r < eval::REASON_NB; ++r)
    reasons[eval::reason_name(r)] = {{"count", a.false_positives[size_t(r)]},
                                     {"share", Proportion{a.false_positives[size_t(r)], fp}.value()}};
  j["false_positives"] = reasons;
  ordered_json mass;
  const double all_illegal = a.illegal_mass[eval::IN_CHECK] + a.illegal_mass[eval::NOT_IN_CHECK];
  for (int k = 0; k < eval::POSITION_KIND_NB; ++k) {
    const auto n = a.kind_positions[size_t(k)];
    mass[eval::position_kind_name(k)] = {
        {"positions", n},
        {"mean_illegal_mass", n ? a.illegal_mass[size_t(k)] / double(n) : 0.0},
        {"share_of_all_illegal_mass", all_illegal > 0 ? a.illegal_mass[size_t(k)] / all_illegal : 0.0}};
  }
  j["illegal_mass_by_position"] = mass;
}

ordered_json dataset_json(const DatasetFigures& d) {
  const eval::Anatomy& a = d.anatomy;
  const Proportion exact{a.exact_sets, a.positions};
  ordered_json j;
  // The figures below are over the first `positions` rows of the `rows_in_data` (all when equal),
  // except rare_moves_whole_set, which is always over every row.
  j["positions"] = a.positions;
  j["rows_in_data"] = d.rows_in_data;
  j["bce"] = d.bce;
  j["precision"] = a.total.precision();
  j["recall"] = a.total.recall();
  j["f1"] = a.total.f1();
  j["exact_set_accuracy"] = exact.value();
  j["exact_set_95ci"] = pair_json(exact.interval());
  j["top1_legal"] = Proportion{a.top1_legal, a.positions}.value();
  j["legal_probability_mass"] = a.positions ? a.legal_mass_sum / double(a.positions) : 0.0;
  j["inference_positions_per_second"] = d.inference_seconds > 0 ? double(a.positions) / d.inference_seconds : 0.0;
  add_breakdowns(a, j);
  j["rare_moves_whole_set"] = {{"positions_scanned", d.scanned},
                               {"positions_with_castling_or_en_passant", d.rare.positions},
                               {"castling", counts_json(d.rare.by_kind[eval::CASTLING])},
                               {"en_passant", counts_json(d.rare.by_kind[eval::EN_PASSANT])}};
  j["situations"] = situation_card_json(d.situations);
  return j;
}

// The rate, count and interval of each kind of pick, in and out of check.
void add_picks(const eval::GamesSummary& g, ordered_json& j) {
  const Proportion all = g.illegal_picks(), in_check = g.illegal_picks_in_check(),
                   not_in_check = g.illegal_picks_not_in_check();
  j["model_picks"] = all.total;
  j["illegal_picks"] = all.count;
  j["illegal_rate_per_pick"] = all.value();
  j["illegal_rate_95ci"] = pair_json(all.interval());
  j["picks_in_check"] = in_check.total;
  j["illegal_picks_in_check"] = in_check.count;
  j["illegal_rate_in_check"] = in_check.value();
  j["illegal_rate_in_check_95ci"] = pair_json(in_check.interval());
  j["picks_not_in_check"] = not_in_check.total;
  j["illegal_picks_not_in_check"] = not_in_check.count;
  j["illegal_rate_not_in_check"] = not_in_check.value();
  j["illegal_rate_not_in_check_95ci"] = pair_json(not_in_check.interval());
}

ordered_json games_json(const eval::GamesSummary& g, Opponent opponent, const EvaluateOptions& o) {
  ordered_json j;
  j["games"] = g.games.size();
  j["opponent"] = choice_of(OPPONENTS, opponent).name;
  j["sampling"] = sampling_name(o.greedy);
  const Proportion clean = g.clean_games();
  j["clean_games"] = clean.count;  // ended by the rules with no illegal pick
  j["clean_games_share"] = clean.value();
  j["clean_games_95ci"] = pair_json(clean.interval());
  j["mean_plies_before_first_illegal"] = g.mean_plies_before_illegal();
  j["mean_plies_95ci"] = pair_json(g.mean_plies_interval());
  add_picks(g, j);
  j["illegal_rate_95ci_over_games"] = pair_json(g.illegal_rate_interval_over_games());
  // The game that holds the most illegal picks (numbered as the gallery's captions), null when
  // none holds one: against the adversary one game can hold most of them.
  if (const auto worst = g.worst_game())
    j["worst_game"] = {{"game", *worst + 1},
                       {"illegal_picks", g.games[*worst].illegal_picks},
                       {"model_picks", g.games[*worst].model_picks}};
  else
    j["worst_game"] = nullptr;
  const auto by_reason = g.illegal_by_reason();
  j["illegal_picks_leaving_king_in_check"] = by_reason[eval::KING_SAFETY];
  ordered_json reasons;
  for (int r = 0; r < eval::REASON_NB; ++r) reasons[eval::reason_name(r)] = by_reason[size_t(r)];
  j["illegal_picks_by_reason"] = reasons;
  j["resample_after_illegal"] = o.resample_illegal;
  if (opponent == Opponent::RANDOM) j["vs_random"] = {{"wins", g.wins}, {"draws", g.draws}, {"losses", g.losses}};
  if (opponent == Opponent::ADVERSARY) j["mean_illegal_mass_after_adversary"] = g.mean_adversary_mass();
  j["seconds"] = g.seconds;
  return j;
}

ordered_json search_json(const eval::SearchSummary& s, int budget) {
  const Proportion broken = s.broken();
  ordered_json j;
  j["starts"] = s.starts.size();
  j["budget"] = budget;
  j["broken"] = broken.count;
  j["broken_share"] = broken.value();
  j["broken_95ci"] = pair_json(broken.interval());
  j["broken_at_start"] = std::count_if(s.starts.begin(), s.starts.end(), [](const auto& x) { return x.start_broken; });
  j["median_evaluations_to_break"] = s.median_evaluations_to_break();
  ordered_json situations;
  for (int k = 0; k < eval::SITUATION_NB; ++k) {
    uint64_t n = 0;
    for (const auto& x : s.starts) n += x.broken && (x.situations >> k & 1);
    situations[eval::situation_label(k)] = n;
  }
  j["breaks_by_situation"] = situations;
  ordered_json breaks = ordered_json::array();
  for (const auto& x : s.starts)
    if (x.broken && breaks.size() < 20)
      breaks.push_back(
          {{"start", x.start}, {"found", x.worst}, {"evaluations", x.evaluations}, {"margin", x.worst_margin}});
  j["breaks"] = breaks;  // the first 20, to reproduce
  j["seconds"] = s.seconds;
  return j;
}

ordered_json position_json(const ShownPosition& p) {
  ordered_json top = ordered_json::array();
  for (const ShownMove& m : p.top_moves)
    top.push_back({{"move", encode::index_name(m.index)},
                   {"index", m.index},
                   {"probability", m.probability},
                   {"legal", m.legal}});
  return {{"fen", p.fen}, {"top_moves", top}};
}

// The gallery's positions: the FENs and moves to reproduce every board.
ordered_json gallery_json(const std::vector<eval::MistakeGroup>& groups, const std::string& dir) {
  ordered_json out = ordered_json::array();
  for (const auto& g : groups) {
    ordered_json mistakes = ordered_json::array();
    for (const auto& m : g.mistakes) {
      std::vector<std::string> missed;
      for (int index : m.missed) missed.push_back(encode::index_name(index));
      mistakes.push_back({{"fen", m.fen},
                          {"move", encode::index_name(m.move)},
                          {"probability", m.probability},
                          {"reason", eval::reason_name(m.reason)},
                          {"illegal_mass", m.illegal_mass},
                          {"missed_legal_moves", missed},
                          {"where", m.where}});
    }
    out.push_back({{"name", g.name},
                   {"title", g.title},
                   {"picture", dir.empty() ? "" : g.name + ".svg"},
                   {"mistakes", mistakes}});
  }
  return out;
}

ordered_json model_json(const ModelFacts& m, const std::string& path) {
  return {{"path", path},
          {"description", m.description},
          {"config", m.config},
          {"input_kind", m.input_kind},
          {"input_kind_from_move_generator", m.input_kind_from_move_generator},
          {"input_kind_description", m.input_kind_description},
          {"parameters", m.parameters},
          {"training", m.training}};
}

}  // namespace

ordered_json EvaluateReport::json() const {
  ordered_json report = provenance_json("evaluate", options.command_line);
  report["model"] = model_json(model, options.model);
  ordered_json facts{{"max_plies", options.max_plies},
                     {"device", device.device},
                     {"compute_precision", device.precision},
                     {"kernels", device.kernels}};
  if (device.note) facts["device_note"] = *device.note;
  report["options"] = evaluate_options().record(options, facts);
  if (dataset) report["dataset"] = dataset_json(*dataset);
  if (!position_sets.empty()) {
    ordered_json sets = ordered_json::array();
    for (const PositionSetFigures& set : position_sets)
      sets.push_back({{"path", set.path}, {"situations", situation_card_json(set.situations)}});
    report["position_sets"] = sets;
  }
  if (games) report["games"] = games_json(*games, options.opponent, options);
  if (adversary_games) report["adversary_games"] = games_json(*adversary_games, Opponent::ADVERSARY, options);
  if (!searches.empty()) {
    ordered_json all = ordered_json::array();
    for (const SearchFigures& f : searches) {
      ordered_json j{{"path", f.path}, {"search", search_json(f.search, options.search_budget)}};
      if (f.random_edits) j["random_edits"] = search_json(*f.random_edits, options.random_edit_budget);
      all.push_back(j);
    }
    report["position_search"] = all;
  }
  if (position) report["position"] = position_json(*position);
  report["gallery"] = gallery_json(gallery, options.gallery);
  return report;
}

std::string EvaluateReport::json_text(const ordered_json& report) { return report_text(report); }

}  // namespace legalnet::run
