#include "run/tensorize.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <deque>
#include <future>
#include <memory>
#include <unordered_set>

#include "chess/game_end.h"
#include "data/dataset_writer.h"
#include "pgn/pgn_reader.h"
#include "util/console.h"
#include "util/error.h"
#include "util/files.h"
#include "util/progress.h"
#include "util/provenance.h"
#include "util/rng.h"
#include "util/thread_pool.h"
#include "util/text.h"

namespace legalnet::run {
namespace {

constexpr size_t GAMES_PER_BATCH = 32;
// A batch also ends at this many plies, so that the batches in flight hold a bounded number of
// encoded rows (about 520 bytes each) however long the games are: 32 games of 80 plies, or
// one game of up to MAX_GAME_PLIES.
constexpr size_t PLIES_PER_BATCH = 16384;
// A file of 100,000 variant games should not print 100,000 lines: the summary counts them all.
constexpr uint64_t MAX_SKIP_MESSAGES_PER_REASON = 20;

struct PendingGame {
  PgnGame pgn;
  int32_t source = 0;
};

// A batch of games replayed and encoded by a worker.
struct EncodedBatch {
  data::EncodedRows rows;
  struct Game {
    data::GameInfo info;
    uint32_t first_row = 0, last_row = 0;
    std::string error;  // non-empty: the game is skipped
    std::string skip_reason;
    std::string note;
    uint64_t number = 0;
    int first_line = 0;
    std::string source_path;
  };
  std::vector<Game> games;
};

int8_t result_code(std::string_view result) {
  if (result == "1-0") return 1;
  if (result == "0-1") return -1;
  if (result == "1/2-1/2") return 0;
  return -2;
}

EncodedBatch encode_batch(const std::vector<PendingGame>& batch, const std::vector<std::string>& sources,
                          bool include_final) {
  EncodedBatch out;
  for (const PendingGame& pending : batch) {
    const PgnGame& pgn = pending.pgn;
    EncodedBatch::Game g;
    g.first_row = uint32_t(out.rows.size());
    g.number = pgn.number;
    g.first_line = pgn.first_line;
    g.source_path = sources[size_t(pending.source)];
    int ply = 0;
    const ReplayedGame replayed =
        replay_pgn_game(pgn, [&](const chess::Position& pos, const chess::MoveList& legal, chess::Move played) {
          out.rows.add(pos, legal, played, ply++);
        });
    g.note = replayed.note;
    if (!replayed.error.empty()) {
      // Drop the rows of a bad game: nothing of it reaches the dataset.
      g.error = replayed.error;
      g.skip_reason = replayed.skip_reason;
      out.rows.truncate(g.first_row);
    } else {
      const chess::MoveList final_moves(replayed.end);
      if (include_final) out.rows.add(replayed.end, final_moves, chess::Move::none(), ply);
      g.info.plies = int32_t(replayed.moves.size());
      g.info.source = pending.source;
      g.info.source_game = int64_t(pgn.number);
      g.info.source_line = pgn.first_line;
      g.info.result = result_code(pgn.result.empty() ? pgn.tag("Result") : std::string_view(pgn.result));
      g.info.termination = int8_t(chess::termination(replayed.end, final_moves.size()));
    }
    g.last_row = uint32_t(out.rows.size());
    out.games.push_back(std::move(g));
  }
  return out;
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

// The summary as JSON, complete but not yet renamed onto --report: the datasets and it take
// their names together.
std::unique_ptr<OutputFile> write_report(const TensorizeOptions& o, const TensorizeSummary& s) {
  nlohmann::ordered_json j = provenance_json("tensorize", o.command_line);
  j["pgn_files"] = o.pgn_files;
  j["games_read"] = s.games_read;
  j["games_kept"] = s.games;
  j["games_skipped"] = s.skipped_games;
  j["skipped_by_reason"] = s.skipped_by_reason;
  j["games_with_notes"] = s.games_with_notes;
  j["positions"] = s.positions;
  j["duplicate_positions_dropped"] = s.dropped_duplicates;
  j["stopped_at_max_positions"] = s.stopped_at_max_positions;
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < s.outputs.size(); ++i)
    outputs.push_back({{"path", s.outputs[i]}, {"positions", s.output_positions[i]}});
  j["outputs"] = outputs;
  j["bytes"] = s.bytes;
  j["seconds"] = s.seconds;
  j["positions_per_second"] = s.seconds > 0 ? double(s.positions) / s.seconds : 0.0;
  auto out = std::make_unique<OutputFile>(o.report);
  out->write(j.dump(2) + "\n");
  out->finish();
  return out;
}

}  // namespace

std::vector<std::string> split_part_names(size_t n) {
  if (n == 2) return {"train", "val"};
  if (n == 3) return {"train", "val", "test"};
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("part" + std::to_string(i));
  return names;
}

std::string split_output_path(const std::string& out, const std::string& part) {
  const size_t slash = out.find_last_of('/');
  const size_t dot = out.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return out + "." + part + ".h5";
  return out.substr(0, dot) + "." + part + out.substr(dot);
}

TensorizeSummary run_tensorize(const TensorizeOptions& o) {
  if (o.pgn_files.empty()) throw Error("no input: give --in FILE (or --in - for stdin)");
  if (o.out.empty()) throw Error("no output: give --out FILE.h5");
  if (o.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
  const int threads = worker_threads(o.threads);
  if (!o.split.empty()) {
    double sum = 0;
    for (double f : o.split) {
      if (!(f > 0)) throw Error("--split fractions must be positive");
      sum += f;
    }
    if (o.split.size() < 2 || o.split.size() > 3 || std::fabs(sum - 1.0) > 1e-6)
      throw Error("--split needs 2 or 3 fractions that add up to 1, e.g. 0.9,0.05,0.05");
  }

  std::vector<std::string> part_names =
      o.split.empty() ? std::vector<std::string>{"all"} : split_part_names(o.split.size());
  {
    std::vector<NamedPath> outputs, inputs;
    for (const auto& part : part_names)
      outputs.push_back({"--out", o.split.empty() ? o.out : split_output_path(o.out, part)});
    outputs.push_back({"--report", o.report});
    for (const auto& in : o.pgn_files) inputs.push_back({"--in", in});
    check_outputs_are_not_inputs(outputs, inputs);
    // Every output writable, and all the JSON will hold is text: found now, not after the work.
    for (const auto& out : outputs) check_output_writable(out);
    if (!o.report.empty()) {
      const NamedPath json{"--report", o.report};
      for (const auto& p : inputs) check_json_text(p.option, p.path, json);
      for (const auto& p : outputs) check_json_text(p.option, p.path, json);
      check_json_text("the command line", o.command_line, json);
    }
  }
  ThreadPool pool(threads);
  std::vector<std::unique_ptr<data::DatasetWriter>> writers;
  for (const auto& part : part_names)
    writers.push_back(
        std::make_unique<data::DatasetWriter>(o.split.empty() ? o.out : split_output_path(o.out, part), pool));

  TensorizeSummary summary;
  uint64_t total_bytes = 0;
  for (const auto& in : o.pgn_files) total_bytes += in == "-" ? 0 : file_size(in);
  Progress progress("positions", 0, !o.quiet && stderr_is_terminal());
  std::unordered_set<uint64_t> seen;
  std::vector<uint32_t> selected;
  bool stop = false;

  // Consumes one encoded batch in input order: routes, dedupes and writes its games.
  auto consume = [&](EncodedBatch batch) {
    for (const auto& g : batch.games) {
      if (stop) return;
      ++summary.games_read;
      if (!g.error.empty()) {
        const std::string message =
            fmt::format("{}: game {} (line {}): {}", g.source_path, g.number, g.first_line, g.error);
        if (o.strict) throw Error(message);
        ++summary.skipped_games;
        const uint64_t same_reason = ++summary.skipped_by_reason[g.skip_reason];
        if (same_reason <= MAX_SKIP_MESSAGES_PER_REASON) {
          progress.finish();
          say("tensorize: skipped {}\n", printable(message, 1000));
          if (same_reason == MAX_SKIP_MESSAGES_PER_REASON)
            say("tensorize: further games skipped for '{}' are only counted in the summary\n", printable(g.skip_reason));
        }
        continue;
      }
      if (!g.note.empty()) {
        if (++summary.games_with_notes <= MAX_SKIP_MESSAGES_PER_REASON && !o.quiet) {
          progress.finish();
          say("tensorize: note: {}\n", printable(fmt::format("{}: game {} (line {}): {}", g.source_path, g.number,
                                                              g.first_line, g.note), 1000));
        }
      }
      size_t part = 0;
      if (!o.split.empty()) {
        // Deterministic by game identity: the same game lands in the same part in every run.
        GameRng rng(o.split_seed, (uint64_t(g.info.source) << 40) ^ uint64_t(g.info.source_game));
        double u = rng.uniform();
        while (part + 1 < o.split.size() && u >= o.split[part]) u -= o.split[part++];
      }
      selected.clear();
      for (uint32_t r = g.first_row; r < g.last_row; ++r) {
        if (o.dedupe && !seen.insert(batch.rows.key[r]).second) {
          ++summary.dropped_duplicates;
          continue;
        }
        selected.push_back(r);
      }
      if (o.max_positions && summary.positions + selected.size() > o.max_positions) {
        summary.stopped_at_max_positions = true;
        stop = true;
        return;
      }
      writers[part]->add_game(g.info, batch.rows, selected);
      summary.positions += selected.size();
      ++summary.games;
    }
  };

  // This thread parses PGN and writes; workers replay, encode and compress. Batches are
  // consumed in submission order, so the output does not depend on --threads.
  std::deque<std::future<EncodedBatch>> in_flight;
  const size_t max_in_flight = size_t(2 * threads + 1);
  uint64_t bytes_done = 0;
  for (size_t source = 0; source < o.pgn_files.size() && !stop; ++source) {
    PgnReader reader(o.pgn_files[source]);
    while (!stop) {
      auto batch = std::make_shared<std::vector<PendingGame>>();
      PgnGame game;
      size_t plies = 0;
      while (batch->size() < GAMES_PER_BATCH && plies < PLIES_PER_BATCH && reader.next(game)) {
        plies += game.sans.size();
        batch->push_back({std::move(game), int32_t(source)});
      }
      if (batch->empty()) break;
      in_flight.push_back(pool.submit([batch, &o] { return encode_batch(*batch, o.pgn_files, o.include_final); }));
      while (in_flight.size() > max_in_flight && !stop) {
        consume(in_flight.front().get());
        in_flight.pop_front();
      }
      if (total_bytes) progress.set_fraction(double(bytes_done + reader.compressed_bytes_read()) / double(total_bytes));
      progress.update(summary.positions);
    }
    bytes_done += reader.compressed_bytes_read();
  }
  for (; !in_flight.empty(); in_flight.pop_front()) {
    if (stop)
      in_flight.front().wait();
    else
      consume(in_flight.front().get());
  }
  progress.finish();

  data::DatasetProvenance provenance;
  provenance.command_line = o.command_line;
  provenance.sources = o.pgn_files;
  provenance.split_seed = o.split_seed;
  provenance.include_final = o.include_final;
  provenance.dedupe = o.dedupe;
  for (size_t i = 0; i < writers.size(); ++i) {
    provenance.split = part_names[i];
    writers[i]->finish(provenance);
    summary.outputs.push_back(writers[i]->path());
    summary.output_positions.push_back(writers[i]->rows());
    summary.bytes += file_size(writers[i]->finished_path());
  }
  summary.seconds = progress.elapsed_seconds();
  std::unique_ptr<OutputFile> report;
  if (!o.report.empty()) report = write_report(o, summary);
  // Every output is complete: only now does any of them take its name.
  for (auto& writer : writers) writer->commit();
  if (report) report->commit();
  if (!o.quiet) {
    const double secs = std::max(summary.seconds, 1e-9);
    say("tensorize: {} games, {} positions, {} skipped games, {:.2f} s, {} positions/s, {:.1f} bytes/position\n",
        summary.games, summary.positions, summary.skipped_games, summary.seconds,
        human_count(double(summary.positions) / secs),
        summary.positions ? double(summary.bytes) / double(summary.positions) : 0.0);
    if (summary.games_read != summary.games)
      say("  {} games read: {} kept, {} skipped\n", summary.games_read, summary.games, summary.skipped_games);
    for (const auto& [reason, count] : summary.skipped_by_reason) say("  skipped for {}: {}\n", reason, count);
    if (summary.games_with_notes) say("  {} games kept with a note (read leniently)\n", summary.games_with_notes);
    if (o.dedupe) say("  {} duplicate positions dropped\n", summary.dropped_duplicates);
    if (summary.stopped_at_max_positions)
      say("  stopped at --max-positions {} (before a game that would exceed it)\n", o.max_positions);
    for (size_t i = 0; i < summary.outputs.size(); ++i)
      say("  {}: {} positions\n", summary.outputs[i], summary.output_positions[i]);
  }
  return summary;
}

}  // namespace legalnet::run
