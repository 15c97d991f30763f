// The terminal table from the EvaluateReport: the model and device, the headline with its 95%
// intervals, then the dataset's breakdowns, each position set's card, the games and --fen.
#include <fmt/core.h>

#include "encode/encode.h"
#include "run/evaluate/report.h"
#include "util/stats.h"
#include "util/text.h"

namespace legalnet::run {
namespace {

// "12.3%  (11.0-13.7%)"
std::string percent(double value, std::pair<double, double> ci, int digits) {
  return fmt::format("{:.{}f}%  ({:.{}f}-{:.{}f}%)", 100 * value, digits, 100 * ci.first, digits, 100 * ci.second,
                     digits);
}
std::string percent(const Proportion& p, int digits) { return percent(p.value(), p.interval(), digits); }

// Which rows the dataset's figures are over: all of them, or the first of how many, and of which
// --data file (any dataset: held-out rows in the pipeline, whatever the user names otherwise).
std::string rows_measured(const DatasetFigures& d, const std::vector<std::string>& data) {
  const uint64_t n = d.anatomy.positions, all = d.rows_in_data;
  const std::string of = data.size() == 1 ? printable(data[0]) : fmt::format("{} --data files", data.size());
  return n == all ? fmt::format("all {} rows of {}", all, of)
                  : fmt::format("the first {} of {} rows of {}", n, all, of);
}

void print_situation_card(const std::string& title, const eval::SituationCard& card) {
  fmt::print("\n{}\n", title);
  fmt::print("  {:<36} {:>9} {:>22} {:>10} {:>22}\n", "situation", "positions", "exact sets (95%)", "illegal mass",
             "sampled illegal (95%)");
  auto pct = [](const Proportion& p, int digits) {
    const auto [low, high] = p.interval();
    return fmt::format("{:.{}f}% ({:.{}f}-{:.{}f})", 100 * p.value(), digits, 100 * low, digits, 100 * high, digits);
  };
  for (int s = 0; s < eval::SITUATION_NB; ++s) {
    const eval::SituationRow& r = card.rows[size_t(s)];
    const char* name = eval::situation_label(s);
    if (r.positions == 0) {
      fmt::print("  {:<36} {:>9}\n", name, 0);
      continue;
    }
    fmt::print("  {:<36} {:>9} {:>22} {:>9.3f}% {:>22}\n", name, r.positions, pct(r.exact(), 2),
               100 * r.mean_illegal_mass(), r.sampled_illegal.total > 0 ? pct(r.sampled_illegal, 3) : std::string("-"));
  }
}

void print_games_headline(const eval::GamesSummary& g, Opponent opponent) {
  const std::string games = fmt::format("{} games vs {}", g.games.size(), choice_of(OPPONENTS, opponent).name);
  const Proportion clean = g.clean_games(), all = g.illegal_picks(), in_check = g.illegal_picks_in_check(),
                   not_in_check = g.illegal_picks_not_in_check();
  fmt::print("  {:<44} {:<26} {} of {}\n", "games ending by the rules, no illegal pick", percent(clean, 1), clean.count,
             games);
  fmt::print("  {:<44} {:<26} {} of {} picks\n", "illegal picks per pick", percent(all, 3), all.count, all.total);
  // Picks within a game are not independent draws: the interval over games, and the game that
  // holds the most of them, say how much of the rate one blind spot makes.
  const auto [low, high] = g.illegal_rate_interval_over_games();
  const auto worst = g.worst_game();
  fmt::print("  {:<44} {:<26} {}\n", "  95% interval over games",
             fmt::format("{:8}({:.3f}-{:.3f}%)", "", 100 * low, 100 * high),
             worst ? fmt::format("worst game {}: {} of its {} picks", *worst + 1, g.games[*worst].illegal_picks,
                                 g.games[*worst].model_picks)
                   : std::string("no game with an illegal pick"));
  fmt::print("  {:<44} {:<26} {} of {} picks in check\n", "  when in check", percent(in_check, 3), in_check.count,
             in_check.total);
  fmt::print("  {:<44} {:<26} {} of {} picks\n", "  when not in check", percent(not_in_check, 3), not_in_check.count,
             not_in_check.total);
  const auto [plies_low, plies_high] = g.mean_plies_interval();
  fmt::print("  {:<44} {:<26} {}\n", "plies before the first illegal move",
             fmt::format("{:.1f}  ({:.1f}-{:.1f})", g.mean_plies_before_illegal(), plies_low, plies_high), games);
}

// The figures a run is judged by, first, each with its 95% interval and what it was measured
// over: with a net that rarely errs, the share of clean games and the illegal rate in check
// move while the mean plies is mostly game length.
void print_headline(const EvaluateReport& r) {
  if (!r.games && !r.adversary_games && !r.dataset && r.position_sets.empty() && r.searches.empty()) return;
  fmt::print("\nHeadline (95% intervals):\n");
  if (r.games) print_games_headline(*r.games, r.options.opponent);
  if (r.adversary_games) print_games_headline(*r.adversary_games, Opponent::ADVERSARY);
  for (const SearchFigures& f : r.searches) {
    const auto line = [&](const char* how, const eval::SearchSummary& s, int budget) {
      const Proportion broken = s.broken();
      fmt::print("  {:<44} {:<26} {} of {} starts of {} (median {} evaluations)\n",
                 fmt::format("starts broken by {} within {}", how, budget), percent(broken, 1), broken.count,
                 broken.total, printable(f.path), s.median_evaluations_to_break());
    };
    line("the search", f.search, r.options.search_budget);
    if (f.random_edits) line("random edits", *f.random_edits, r.options.random_edit_budget);
  }
  if (r.dataset) {
    const eval::Anatomy& a = r.dataset->anatomy;
    fmt::print("  {:<44} {:<26} {}\n", "exact legal sets", percent(Proportion{a.exact_sets, a.positions}, 2),
               rows_measured(*r.dataset, r.options.data));
  }
  // Off the positions random games reach: each set's positions with a legal move.
  for (const PositionSetFigures& set : r.position_sets) {
    const eval::SituationRow& row = set.situations.rows[eval::WITH_LEGAL_MOVE];
    const std::string where = fmt::format("{} positions of {}", row.positions, printable(set.path));
    // The wrong sets counted too: on a whole class of positions the target is none, which a share
    // rounded to 100.00% hides.
    const Proportion exact = row.exact();
    fmt::print("  {:<44} {:<26} {} ({} wrong)\n", "exact legal sets", percent(exact, 2), where,
               exact.total - exact.count);
    fmt::print("  {:<44} {:<26} {}\n", "  mass on illegal moves",
               percent(row.mean_illegal_mass(), row.illegal_mass_interval(), 3), where);
    fmt::print("  {:<44} {:<26} {}\n", "  sampled picks illegal", percent(row.sampled_illegal, 3), where);
  }
}

void print_kind_row(const char* name, const Counts& c) {
  fmt::print("  {:<16} {:>8.2f}% {:>9.2f}% {:>10}\n", name, 100 * c.recall(), 100 * c.precision(), c.legal());
}

void print_dataset(const DatasetFigures& d, const EvaluateOptions& o) {
  const eval::Anatomy& a = d.anatomy;
  const double positions = double(a.positions);
  fmt::print("\nOn {} (threshold {}):\n", rows_measured(d, o.data), double(o.threshold));
  fmt::print("  BCE                      {:.6f}\n", d.bce);
  fmt::print("  precision / recall / F1  {:.4f} / {:.4f} / {:.4f}\n", a.total.precision(), a.total.recall(),
             a.total.f1());
  fmt::print("  exact legal set          {:.2f}%\n", 100 * Proportion{a.exact_sets, a.positions}.value());
  fmt::print("  top-1 move legal         {:.2f}%\n", 100 * Proportion{a.top1_legal, a.positions}.value());
  fmt::print("  probability on legal     {:.2f}%\n", 100 * (a.positions ? a.legal_mass_sum / positions : 0.0));
  fmt::print("  inference                {:.0f} positions/s\n",
             d.inference_seconds > 0 ? positions / d.inference_seconds : 0.0);
  fmt::print("\n  {:<16} {:>9} {:>10} {:>10}\n", "move kind", "recall", "precision", "legal");
  for (int k = 0; k < eval::MOVE_KIND_NB; ++k) print_kind_row(eval::move_kind_name(k), a.by_kind[size_t(k)]);
  fmt::print("\n  over the whole set ({} positions, {} with castling or en passant):\n", d.scanned, d.rare.positions);
  print_kind_row("castling", d.rare.by_kind[eval::CASTLING]);
  print_kind_row("en_passant", d.rare.by_kind[eval::EN_PASSANT]);
  fmt::print("\n  false positives by reason\n");
  uint64_t fp = 0;
  for (auto n : a.false_positives) fp += n;
  for (int r = 0; r < eval::REASON_NB; ++r)
    fmt::print("  {:<34} {:>8} {:>6.1f}%\n", eval::reason_name(r), a.false_positives[size_t(r)],
               100 * Proportion{a.false_positives[size_t(r)], fp}.value());
  fmt::print("\n  illegal probability mass by position\n");
  const double all_illegal = a.illegal_mass[eval::IN_CHECK] + a.illegal_mass[eval::NOT_IN_CHECK];
  for (int k = 0; k < eval::POSITION_KIND_NB; ++k) {
    const uint64_t n = a.kind_positions[size_t(k)];
    const double mass = a.illegal_mass[size_t(k)];
    fmt::print("  {:<28} {:>7} positions, mean {:>6.2f}%, {:>5.1f}% of all\n", eval::position_kind_name(k), n,
               100 * (n ? mass / double(n) : 0.0), 100 * (all_illegal > 0 ? mass / all_illegal : 0.0));
  }
  print_situation_card("By situation, on " + rows_measured(d, o.data) + ":", d.situations);
}

void print_games(const eval::GamesSummary& g, Opponent opponent, const EvaluateOptions& o) {
  fmt::print("\nIn {} games against {} ({}):\n", g.games.size(), choice_of(OPPONENTS, opponent).name,
             sampling_name(o.greedy));
  const auto by_reason = g.illegal_by_reason();
  fmt::print("  illegal picks by reason ({} in all):", g.illegal_picks().count);
  for (int r = 0; r < eval::REASON_NB; ++r)
    fmt::print("{} {} {}", r ? "," : "", eval::reason_name(r), by_reason[size_t(r)]);
  fmt::print("\n");
  if (opponent == Opponent::RANDOM) fmt::print("  vs random: {} won, {} drawn, {} lost\n", g.wins, g.draws, g.losses);
  if (opponent == Opponent::ADVERSARY)
    fmt::print("  the model's mean illegal mass after the adversary's moves: {:.4f}%\n", 100 * g.mean_adversary_mass());
}

}  // namespace

void EvaluateReport::print() const {
  fmt::print("model    {}  ({} parameters)\n", model.description, model.parameters);
  fmt::print("inputs   {}{}: {}\n", model.input_kind,
             model.input_kind_from_move_generator ? " (ENGINE-ASSISTED: planes from the move generator)"
                                                  : " (the position only, nothing derived)",
             model.input_kind_description);
  fmt::print("device   {} in {}{}{}\n", device.device, device.precision,
             device.kernels == "board" ? " on the board kernels" : "",
             device.note ? " (--device auto: " + *device.note + ")" : std::string());
  print_headline(*this);
  if (dataset) print_dataset(*dataset, options);
  for (const PositionSetFigures& set : position_sets)
    print_situation_card("By situation, on the positions of " + printable(set.path) + ":", set.situations);
  if (games) print_games(*games, options.opponent, options);
  if (adversary_games) print_games(*adversary_games, Opponent::ADVERSARY, options);
  if (position) {
    fmt::print("\nPosition {}\n", position->fen);
    for (const ShownMove& m : position->top_moves)
      fmt::print("  {:<6} {:>7.3f}  {}\n", encode::index_name(m.index), double(m.probability),
                 m.legal ? "legal" : "ILLEGAL");
  }
}

}  // namespace legalnet::run
