#include "run/evaluate.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "chess/notation.h"
#include "data/dataset_reader.h"
#include "encode/encode.h"
#include "encode/inputs.h"
#include "eval/anatomy.h"
#include "eval/gallery.h"
#include "eval/games.h"
#include "eval/picture.h"
#include "nn/device.h"
#include "nn/model_file.h"
#include "nn/precision.h"
#include "nn/predict.h"
#include "run/position_sets.h"
#include "util/console.h"
#include "util/error.h"
#include "util/json.h"
#include "util/files.h"
#include "util/progress.h"
#include "util/provenance.h"
#include "util/stats.h"

namespace legalnet::run {
using namespace nn;  // the networks this tool runs
namespace {

using nlohmann::ordered_json;

struct DatasetResult {
  eval::Anatomy anatomy;
  uint64_t rows_in_data = 0;  // all rows of the --data files; anatomy.positions are the first of them
  double bce = 0;
  double inference_seconds = 0;
  // Positions of the whole dataset with a legal castling or en-passant move.
  eval::Anatomy rare;
  uint64_t scanned = 0;
  eval::SituationCard situations;  // over the measured rows
};

// The rare kinds over every row: positions with a castling or en-passant move, in batches.
void add_rare_moves(const LoadedModel& model, const EvaluateOptions& o, const torch::Device& device,
                    Precision precision, DatasetResult& r) {
  std::vector<chess::Position> pending;
  auto flush = [&] {
    std::vector<const chess::Position*> pointers;
    for (const auto& p : pending) pointers.push_back(&p);
    const std::vector<float> probs = predict(model, pointers, device, precision);
    for (size_t i = 0; i < pending.size(); ++i)
      r.rare.add(pending[i], chess::MoveList(pending[i]), &probs[i * encode::MOVE_INDICES], o.threshold);
    pending.clear();
  };
  data::for_each_row_slice(o.data, [&](const data::RowSlice& s) {
    for (auto& pos : s.reader.read_board_positions(s.start, s.count)) {
      ++r.scanned;
      if (!encode::has_rare_move(chess::MoveList(pos))) continue;
      pending.push_back(std::move(pos));
      if (pending.size() == size_t(o.batch_size)) flush();
    }
    return true;
  });
  if (!pending.empty()) flush();
}

DatasetResult evaluate_dataset(const LoadedModel& model, const EvaluateOptions& o, const torch::Device& device,
                               Precision precision, eval::Gallery& gallery) {
  DatasetResult r;
  double bce_sum = 0;
  for (const auto& path : o.data) r.rows_in_data += data::DatasetReader(path).num_positions();
  const uint64_t total = o.max_positions ? std::min(r.rows_in_data, o.max_positions) : r.rows_in_data;
  // Over every row, the rare kinds are counted in this pass instead of a second one.
  const bool whole_set = total == r.rows_in_data;
  if (total == 0)  // a BCE of 0 and a precision of 0 would read as figures
    throw Error("--data: " + fmt::format("{}", fmt::join(o.data, ", ")) + " holds no positions to measure");
  Progress progress("positions", total, !o.quiet && stderr_is_terminal());
  uint64_t done = 0;
  for (const auto& path : o.data) {
    const data::DatasetReader reader(path);
    const uint64_t n = std::min(reader.num_positions(), total - done);
    for (uint64_t start = 0; start < n; start += uint64_t(o.batch_size)) {
      const uint64_t count = std::min(uint64_t(o.batch_size), n - start);
      const std::vector<chess::Position> positions = reader.read_board_positions(start, count);
      std::vector<const chess::Position*> pointers;
      for (const auto& p : positions) pointers.push_back(&p);
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<float> probs = predict(model, pointers, device, precision, &bce_sum);
      r.inference_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (uint64_t i = 0; i < count; ++i) {
        const chess::MoveList legal(positions[i]);
        const float* p = &probs[i * encode::MOVE_INDICES];
        r.anatomy.add(positions[i], legal, p, o.threshold);
        r.situations.add(positions[i], legal, p, o.threshold, sampled_pick_uniform(o.seed, done + i));
        if (whole_set && encode::has_rare_move(legal)) r.rare.add(positions[i], legal, p, o.threshold);
        gallery.add_position(positions[i], legal, p, fmt::format("row {} of {}", start + i, path));
      }
      done += count;
      progress.update(done);
    }
    if (done >= total) break;
  }
  progress.finish();
  r.bce = r.anatomy.positions ? bce_sum / (double(r.anatomy.positions) * encode::MOVE_INDICES) : 0.0;
  if (whole_set)
    r.scanned = done;
  else
    add_rare_moves(model, o, device, precision, r);
  return r;
}

double ratio(uint64_t a, uint64_t b) { return b ? double(a) / double(b) : 0.0; }

ordered_json interval_json(const Proportion& p) {
  const auto [low, high] = p.interval();
  return {low, high};
}

ordered_json counts_json(const Counts& c) {
  return {{"recall", c.recall()}, {"precision", c.precision()}, {"legal_moves", c.legal()}, {"predicted", c.predicted()}};
}

ordered_json dataset_json(const DatasetResult& d) {
  const eval::Anatomy& a = d.anatomy;
  ordered_json j;
  // The figures below are over the first `positions` rows of the `rows_in_data` (all when equal),
  // except rare_moves_whole_set, which is always over every row.
  j["positions"] = a.positions;
  j["rows_in_data"] = d.rows_in_data;
  j["bce"] = d.bce;
  j["precision"] = a.total.precision();
  j["recall"] = a.total.recall();
  j["f1"] = a.total.f1();
  j["exact_set_accuracy"] = ratio(a.exact_sets, a.positions);
  j["exact_set_95ci"] = interval_json({a.exact_sets, a.positions});
  j["top1_legal"] = ratio(a.top1_legal, a.positions);
  j["legal_probability_mass"] = a.positions ? a.legal_mass_sum / double(a.positions) : 0.0;
  j["inference_positions_per_second"] = d.inference_seconds > 0 ? double(a.positions) / d.inference_seconds : 0.0;
  ordered_json kinds;
  for (int k = 0; k < eval::MOVE_KIND_NB; ++k) kinds[eval::move_kind_name(k)] = counts_json(a.by_kind[size_t(k)]);
  j["by_move_kind"] = kinds;
  ordered_json reasons;
  uint64_t fp = 0;
  for (auto n : a.false_positives) fp += n;
  for (int r2 = 0; r2 < eval::REASON_NB; ++r2)
    reasons[eval::reason_name(r2)] = {{"count", a.false_positives[size_t(r2)]},
                                      {"share", ratio(a.false_positives[size_t(r2)], fp)}};
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
  j["rare_moves_whole_set"] = {{"positions_scanned", d.scanned},
                               {"positions_with_castling_or_en_passant", d.rare.positions},
                               {"castling", counts_json(d.rare.by_kind[eval::CASTLING])},
                               {"en_passant", counts_json(d.rare.by_kind[eval::EN_PASSANT])}};
  j["situations"] = situation_card_json(d.situations);
  return j;
}

ordered_json games_json(const eval::GamesSummary& g, const eval::GameOptions& o) {
  ordered_json j;
  j["games"] = g.games.size();
  j["opponent"] = o.self_play ? "self" : "random";
  j["sampling"] = o.greedy ? "greedy" : "multinomial over sigmoid outputs";
  const Proportion clean = g.clean_games();
  j["clean_games"] = clean.count;  // ended by the rules with no illegal pick
  j["clean_games_share"] = clean.value();
  j["clean_games_95ci"] = interval_json(clean);
  j["mean_plies_before_first_illegal"] = g.mean_plies_before_illegal();
  const auto [plies_lo, plies_hi] = g.mean_plies_interval();
  j["mean_plies_95ci"] = {plies_lo, plies_hi};
  const Proportion all = g.illegal_picks(), in_check = g.illegal_picks_in_check(),
                   not_in_check = g.illegal_picks_not_in_check();
  j["model_picks"] = all.total;
  j["illegal_picks"] = all.count;
  j["illegal_rate_per_pick"] = all.value();
  j["illegal_rate_95ci"] = interval_json(all);
  j["picks_in_check"] = in_check.total;
  j["illegal_picks_in_check"] = in_check.count;
  j["illegal_rate_in_check"] = in_check.value();
  j["illegal_rate_in_check_95ci"] = interval_json(in_check);
  j["picks_not_in_check"] = not_in_check.total;
  j["illegal_picks_not_in_check"] = not_in_check.count;
  j["illegal_rate_not_in_check"] = not_in_check.value();
  j["illegal_rate_not_in_check_95ci"] = interval_json(not_in_check);
  j["illegal_picks_leaving_king_in_check"] = g.illegal_king_safety();
  j["resample_after_illegal"] = o.resample_illegal;
  if (!o.self_play) j["vs_random"] = {{"wins", g.wins}, {"draws", g.draws}, {"losses", g.losses}};
  j["seconds"] = g.seconds;
  return j;
}

// Which rows the dataset's figures are over: all of them, or the first of how many.
std::string rows_measured(const ordered_json& d) {
  const auto n = d["positions"].get<uint64_t>(), all = d["rows_in_data"].get<uint64_t>();
  return n == all ? fmt::format("all {} held-out rows", all) : fmt::format("the first {} of {} held-out rows", n, all);
}

// The figures a run is judged by, first, each with its 95% interval and what it was measured
// over: with a net that rarely errs, the share of clean games and the illegal rate in check
// move while the mean plies is mostly game length.
void print_headline(const ordered_json& report) {
  if (!report.contains("games") && !report.contains("dataset") && !report.contains("position_sets")) return;
  fmt::print("\nHeadline (95% intervals):\n");
  auto percent = [](const ordered_json& value, const ordered_json& ci, int digits) {
    return fmt::format("{:.{}f}%  ({:.{}f}-{:.{}f}%)", 100 * value.get<double>(), digits,
                       100 * ci[0].get<double>(), digits, 100 * ci[1].get<double>(), digits);
  };
  if (report.contains("games")) {
    const auto& g = report["games"];
    const std::string games = fmt::format("{} games vs {}", g["games"].get<int>(), g["opponent"].get<std::string>());
    fmt::print("  {:<44} {:<26} {} of {}\n", "games ending by the rules, no illegal pick",
               percent(g["clean_games_share"], g["clean_games_95ci"], 1), g["clean_games"].get<uint64_t>(), games);
    fmt::print("  {:<44} {:<26} {} of {} picks\n", "illegal picks per pick",
               percent(g["illegal_rate_per_pick"], g["illegal_rate_95ci"], 3), g["illegal_picks"].get<uint64_t>(),
               g["model_picks"].get<uint64_t>());
    fmt::print("  {:<44} {:<26} {} of {} picks in check\n", "  when in check",
               percent(g["illegal_rate_in_check"], g["illegal_rate_in_check_95ci"], 3),
               g["illegal_picks_in_check"].get<uint64_t>(), g["picks_in_check"].get<uint64_t>());
    fmt::print("  {:<44} {:<26} {} of {} picks\n", "  when not in check",
               percent(g["illegal_rate_not_in_check"], g["illegal_rate_not_in_check_95ci"], 3),
               g["illegal_picks_not_in_check"].get<uint64_t>(), g["picks_not_in_check"].get<uint64_t>());
    fmt::print("  {:<44} {:<26} {}\n", "plies before the first illegal move",
               fmt::format("{:.1f}  ({:.1f}-{:.1f})", g["mean_plies_before_first_illegal"].get<double>(),
                           g["mean_plies_95ci"][0].get<double>(), g["mean_plies_95ci"][1].get<double>()),
               games);
  }
  if (report.contains("dataset")) {
    const auto& d = report["dataset"];
    fmt::print("  {:<44} {:<26} {}\n", "exact legal sets", percent(d["exact_set_accuracy"], d["exact_set_95ci"], 2),
               rows_measured(d));
  }
  // Off the positions random games reach: each set's positions with a legal move.
  for (const auto& set : report.value("position_sets", ordered_json::array())) {
    const auto& r = set["situations"][eval::situation_name(eval::WITH_LEGAL_MOVE)];
    const std::string where = fmt::format("{} positions of {}", r["positions"].get<uint64_t>(),
                                          set["path"].get<std::string>());
    fmt::print("  {:<44} {:<26} {}\n", "exact legal sets", percent(r["exact_set_accuracy"], r["exact_set_95ci"], 2),
               where);
    fmt::print("  {:<44} {:<26} {}\n", "  mass on illegal moves", percent(r["mean_illegal_mass"], r["illegal_mass_95ci"], 3),
               where);
    fmt::print("  {:<44} {:<26} {}\n", "  sampled picks illegal",
               percent(r["sampled_illegal_rate"], r["sampled_illegal_95ci"], 3), where);
  }
}

void print_table(const ordered_json& report) {
  fmt::print("model    {}  ({} parameters)\n", report["model"]["description"].get<std::string>(),
             report["model"]["parameters"].get<int64_t>());
  fmt::print("inputs   {}{}: {}\n", report["model"]["input_kind"].get<std::string>(),
             report["model"]["input_kind_from_move_generator"].get<bool>()
                 ? " (ENGINE-ASSISTED: planes from the move generator)"
                 : " (the position only, nothing derived)",
             report["model"]["input_kind_description"].get<std::string>());
  fmt::print("device   {} in {}{}\n", report["options"]["device"].get<std::string>(),
             report["options"]["compute_precision"].get<std::string>(),
             report["options"].contains("device_note")
                 ? " (--device auto: " + report["options"]["device_note"].get<std::string>() + ")"
                 : std::string());
  print_headline(report);
  if (report.contains("dataset")) {
    const auto& d = report["dataset"];
    fmt::print("\nOn {} (threshold {}):\n", rows_measured(d), report["options"]["threshold"].get<double>());
    fmt::print("  BCE                      {:.6f}\n", d["bce"].get<double>());
    fmt::print("  precision / recall / F1  {:.4f} / {:.4f} / {:.4f}\n", d["precision"].get<double>(),
               d["recall"].get<double>(), d["f1"].get<double>());
    fmt::print("  exact legal set          {:.2f}%\n", 100 * d["exact_set_accuracy"].get<double>());
    fmt::print("  top-1 move legal         {:.2f}%\n", 100 * d["top1_legal"].get<double>());
    fmt::print("  probability on legal     {:.2f}%\n", 100 * d["legal_probability_mass"].get<double>());
    fmt::print("  inference                {:.0f} positions/s\n", d["inference_positions_per_second"].get<double>());
    fmt::print("\n  {:<16} {:>9} {:>10} {:>10}\n", "move kind", "recall", "precision", "legal");
    for (const auto& [name, c] : d["by_move_kind"].items())
      fmt::print("  {:<16} {:>8.2f}% {:>9.2f}% {:>10}\n", name, 100 * c["recall"].get<double>(),
                 100 * c["precision"].get<double>(), c["legal_moves"].get<uint64_t>());
    const auto& rare = d["rare_moves_whole_set"];
    fmt::print("\n  over the whole set ({} positions, {} with castling or en passant):\n",
               rare["positions_scanned"].get<uint64_t>(),
               rare["positions_with_castling_or_en_passant"].get<uint64_t>());
    for (const char* name : {"castling", "en_passant"})
      fmt::print("  {:<16} {:>8.2f}% {:>9.2f}% {:>10}\n", name, 100 * rare[name]["recall"].get<double>(),
                 100 * rare[name]["precision"].get<double>(), rare[name]["legal_moves"].get<uint64_t>());
    fmt::print("\n  false positives by reason\n");
    for (const auto& [name, c] : d["false_positives"].items())
      fmt::print("  {:<34} {:>8} {:>6.1f}%\n", name, c["count"].get<uint64_t>(), 100 * c["share"].get<double>());
    fmt::print("\n  illegal probability mass by position\n");
    for (const auto& [name, c] : d["illegal_mass_by_position"].items())
      fmt::print("  {:<28} {:>7} positions, mean {:>6.2f}%, {:>5.1f}% of all\n", name, c["positions"].get<uint64_t>(),
                 100 * c["mean_illegal_mass"].get<double>(), 100 * c["share_of_all_illegal_mass"].get<double>());
    print_situation_card("By situation, on " + rows_measured(d) + ":", d["situations"]);
  }
  for (const auto& set : report.value("position_sets", ordered_json::array()))
    print_situation_card("By situation, on the positions of " + set["path"].get<std::string>() + ":",
                         set["situations"]);
  if (report.contains("games")) {
    const auto& g = report["games"];
    fmt::print("\nIn {} games against {} ({}):\n", g["games"].get<int>(), g["opponent"].get<std::string>(),
               g["sampling"].get<std::string>());
    fmt::print("  illegal picks that leave or put the own king in check: {} of {}\n",
               g["illegal_picks_leaving_king_in_check"].get<uint64_t>(), g["illegal_picks"].get<uint64_t>());
    if (g.contains("vs_random"))
      fmt::print("  vs random: {} won, {} drawn, {} lost\n", g["vs_random"]["wins"].get<int>(),
                 g["vs_random"]["draws"].get<int>(), g["vs_random"]["losses"].get<int>());
  }
  if (report.contains("position")) {
    const auto& p = report["position"];
    fmt::print("\nPosition {}\n", p["fen"].get<std::string>());
    for (const auto& m : p["top_moves"])
      fmt::print("  {:<6} {:>7.3f}  {}\n", m["move"].get<std::string>(), m["probability"].get<double>(),
                 m["legal"].get<bool>() ? "legal" : "ILLEGAL");
  }
}

// The gallery's positions in the report: the FENs and moves to reproduce every board.
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

// The pictures' names are the tool's own, inside the folder: a link planted under one is
// replaced, never written through.
void write_gallery(const std::vector<eval::MistakeGroup>& groups, const std::string& dir, Outputs& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("--gallery: cannot create '" + dir + "': " + ec.message());
  for (const auto& g : groups) {
    auto out = std::make_unique<OutputFile>(dir + "/" + g.name + ".svg", Links::REPLACE);
    out->write(eval::gallery_svg(g));
    outputs.add(std::move(out));
  }
}

}  // namespace

std::string run_evaluate(const EvaluateOptions& o) {
  if (o.model.empty()) throw Error("no model: give --model runs/NAME/model.safetensors");
  if (o.data.empty() && o.positions.empty() && o.games == 0 && o.fen.empty())
    throw Error("nothing to do: give --data, --positions, --games or --fen");
  if (o.opponent != "random" && o.opponent != "self") throw Error("--opponent must be random or self");
  if (!o.picture.empty() && o.fen.empty()) throw Error("--picture needs --fen");
  {
    std::vector<NamedPath> inputs{{"--model", o.model}};
    for (const auto& d : o.data) inputs.push_back({"--data", d});
    for (const auto& p : o.positions) inputs.push_back({"--positions", p});
    std::vector<NamedPath> outputs{{"--report", o.report}, {"--picture", o.picture}};
    // The gallery's pictures replace what lies under their names (a link itself, not what it
    // points to): an input there, or the report or picture, would be lost.
    if (!o.gallery.empty())
      for (const std::string& name : eval::gallery_file_names())
        outputs.push_back({"--gallery", o.gallery + "/" + name, Links::REPLACE});
    check_outputs_are_not_inputs(outputs, inputs);
    std::error_code ec;
    if (!o.gallery.empty() && std::filesystem::exists(o.gallery, ec) && !std::filesystem::is_directory(o.gallery, ec))
      throw Error("--gallery '" + o.gallery + "' is a file; it must be a folder");
    // Every output writable, and what the report will hold is text: found now, not after the games.
    check_output_writable({"--report", o.report});
    check_output_writable({"--picture", o.picture});
    if (!o.gallery.empty()) check_output_folder({"--gallery", o.gallery});
    if (!o.report.empty()) check_json_text("the command line", o.command_line, {"--report", o.report});
  }
  std::optional<chess::Position> shown;  // --fen, read before any costly work
  if (!o.fen.empty()) {
    std::string dropped;  // void castling rights are dropped, as python-chess reads them
    try {
      shown.emplace(o.fen == "startpos" ? chess::START_FEN : std::string_view(o.fen), &dropped);
    } catch (const Error& e) {
      throw Error(std::string("--fen: ") + e.what());
    }
    if (!dropped.empty())
      say("evaluate: note: castling rights '{}' dropped (the king or rook is not on its square)\n", dropped);
  }
  const torch::Device device = pick_device(o.device);
  const Precision precision = resolve_precision(o.compute_precision, device);
  configure_threads(o.threads);
  keep_freed_memory();
  configure_for_speed(device, precision);
  LoadedModel model = load_model(o.model, device);
  model.net->eval();
  choose_memory_format(*model.net);

  ordered_json report = provenance_json("evaluate", o.command_line);
  report["model"] = {{"path", o.model},
                     {"description", model.config.describe()},
                     {"config", ordered_json::parse(model.config.to_json())},
                     {"input_kind", model.config.inputs_name()},
                     {"input_kind_from_move_generator", encode::input_spec(model.config.inputs).from_move_generator},
                     {"input_kind_description", encode::input_spec(model.config.inputs).description},
                     {"parameters", count_parameters(*model.net)},
                     {"training", parse_json<ordered_json>(model.training_json)}};
  report["options"] = {{"data", o.data},           {"positions", o.positions},
                       {"max_positions", o.max_positions},
                       {"threshold", o.threshold}, {"games", o.games},
                       {"opponent", o.opponent},   {"greedy", o.greedy},
                       {"seed", o.seed},           {"max_plies", o.max_plies},
                       {"device", device.str()},   {"compute_precision", precision_name(precision)}};
  if (o.device == "auto" && !device.is_cuda()) report["options"]["device_note"] = cpu_fallback_reason();

  Outputs outputs;  // the picture, the gallery and the report, renamed together at the end
  eval::Gallery gallery(9, float(o.threshold));
  if (!o.data.empty()) report["dataset"] = dataset_json(evaluate_dataset(model, o, device, precision, gallery));
  if (!o.positions.empty()) {
    ordered_json sets = ordered_json::array();
    const PositionSetOptions set_options{.threshold = o.threshold, .batch_size = o.batch_size, .seed = o.seed,
                                         .progress = !o.quiet && stderr_is_terminal()};
    for (const auto& path : o.positions)
      sets.push_back({{"path", path},
                      {"situations", situation_card_json(evaluate_position_set(model, path, device, precision,
                                                                               set_options))}});
    report["position_sets"] = sets;
  }
  if (o.games > 0) {
    eval::GameOptions g;
    g.games = o.games;
    g.seed = o.seed;
    g.greedy = o.greedy;
    g.self_play = o.opponent == "self";
    g.resample_illegal = o.resample_illegal;
    g.max_plies = o.max_plies;
    g.concurrent = std::max(1, std::min(o.batch_size, o.games));
    g.on_illegal_pick = [&](const chess::Position& pos, int game, int ply, int index, const float* probs) {
      gallery.add_illegal_pick(pos, index, probs, fmt::format("game {}, ply {}", game + 1, ply + 1));
    };
    const auto summary =
        eval::play_games([&](const std::vector<const chess::Position*>& positions,
                             std::vector<float>& probs) { probs = predict(model, positions, device, precision); },
                         g);
    report["games"] = games_json(summary, g);
  }
  if (!o.fen.empty()) {
    const chess::Position& pos = *shown;
    const std::vector<float> probs = predict(model, {&pos}, device, precision);
    const encode::LegalMask legal{chess::MoveList(pos)};
    const std::vector<int> order = encode::top_indices(probs.data(), o.top_k);
    ordered_json top = ordered_json::array();
    for (const int index : order) {
      top.push_back(
          {{"move", encode::index_name(index)},
           {"index", index},
           {"probability", probs[size_t(index)]},
           {"legal", legal[index]}});
    }
    report["position"] = {{"fen", pos.fen()}, {"top_moves", top}};
    if (!o.picture.empty())
      eval::write_picture(o.picture, eval::position_svg(pos, probs.data(), int(order.size())), outputs);
  }
  report["gallery"] = gallery_json(gallery.groups(), o.gallery);
  if (!o.gallery.empty()) write_gallery(gallery.groups(), o.gallery, outputs);
  print_table(report);
  // (Without --report nothing was checked: a name that is not UTF-8 shows as U+FFFD.)
  const std::string text = report.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  if (!o.report.empty()) {
    auto out = std::make_unique<OutputFile>(o.report);
    out->write(text);
    outputs.add(std::move(out));
  }
  // Every output is complete: only now does any of them take its name.
  outputs.commit();
  return text;
}

}  // namespace legalnet::run
