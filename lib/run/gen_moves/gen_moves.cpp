#include "run/gen_moves/gen_moves.h"

#include <deque>
#include <future>
#include <memory>

#include <fmt/core.h>

#include "games/game_start.h"
#include "games/random_game.h"
#include "pgn/pgn_writer.h"
#include "run/report_file.h"
#include "util/console.h"
#include "util/files.h"
#include "util/progress.h"
#include "util/thread_pool.h"

namespace legalnet::run {
namespace {

constexpr uint64_t GAMES_PER_BATCH = 64;

std::string termination_tag(const GameRecord& g) {
  return g.termination == chess::Termination::NONE ? "max plies" : std::string(chess::termination_name(g.termination));
}

// A batch of games played by a worker: their PGN text and counts.
struct PlayedBatch {
  std::string text;
  GenMovesReport counts;
};

// Plays games [first, last).
PlayedBatch play_batch(const GenMovesOptions& options, const GameStarts& starts, uint64_t first, uint64_t last) {
  PlayedBatch batch;
  PgnTags tags;
  const std::string mover = options.pressure > 0 ? fmt::format("random, pressure {}", options.pressure) : "random";
  for (uint64_t index = first; index < last; ++index) {
    GameRng rng(options.seed, index);
    const chess::Position start = starts.position(index, rng);
    GameRecord game = play_random_game(start, rng, options.max_plies, options.pressure);
    const std::string result(chess::result_string(game.termination, game.final_side_to_move));
    tags.assign({{"Event", "legalnet random game"},
                 {"Site", "legalnet gen_moves"},
                 {"Date", "????.??.??"},
                 {"Round", std::to_string(index)},
                 {"White", mover},
                 {"Black", mover},
                 {"Result", result},
                 {"Termination", termination_tag(game)},
                 {"Seed", std::to_string(options.seed)},
                 {"PlyCount", std::to_string(game.moves.size())}});
    if (starts.set_up()) {
      tags.emplace_back("SetUp", "1");
      tags.emplace_back("FEN", start.fen());
    }
    append_pgn_game(start, game.moves, tags, batch.text);
    ++batch.counts.games;
    batch.counts.plies += game.moves.size();
    ++batch.counts.endings[game.termination == chess::Termination::NONE ? MAX_PLIES_ENDING : int(game.termination)];
  }
  return batch;
}

// Every output writable, none an input, with what its JSON will hold as text: found now, not
// after the games.
void check_outputs(const GenMovesOptions& o) {
  std::vector<NamedPath> inputs;
  if (!GameStarts::is_keyword(o.start)) inputs.push_back({"--start", o.start});
  check_outputs_are_not_inputs({{"--out", o.out}, {"--report", o.report}}, inputs);
  check_output_writable({"--out", o.out});
  check_output_writable({"--report", o.report});
  if (!o.report.empty()) {
    check_json_text("--out", o.out, {"--report", o.report});
    check_json_text("the command line", o.command_line, {"--report", o.report});
  }
}

// Workers play batches; this thread writes them in submission order, so the output does not
// depend on --threads. The window of batches in flight bounds the memory held.
void play_games(const GenMovesOptions& o, const GameStarts& starts, OutputFile& out, GenMovesReport& report) {
  const GameRange range = shard_range(o.games, o.shard, o.num_shards);
  report.first_game = range.first;
  Progress progress("games", range.last - range.first, !o.quiet && stderr_is_terminal());
  const int threads = worker_threads(o.threads);
  ThreadPool pool(threads);
  std::deque<std::future<PlayedBatch>> in_flight;
  const size_t window = size_t(threads) * 4;
  auto write_front = [&] {
    const PlayedBatch batch = in_flight.front().get();
    in_flight.pop_front();
    out.write(batch.text);
    report.add(batch.counts);
    progress.update(report.games);
  };
  for (uint64_t first = range.first; first < range.last; first += GAMES_PER_BATCH) {
    const uint64_t last = std::min(first + GAMES_PER_BATCH, range.last);
    in_flight.push_back(pool.submit([&o, &starts, first, last] { return play_batch(o, starts, first, last); }));
    while (in_flight.size() > window) write_front();
  }
  while (!in_flight.empty()) write_front();
  out.finish();
  progress.finish();
  report.seconds = progress.elapsed_seconds();
}

}  // namespace

GenMovesReport run_gen_moves(const GenMovesOptions& options) {
  check_gen_moves_options(options);
  check_outputs(options);
  const GameStarts starts(options.start, options.start_fen);
  OutputFile out(options.out);
  GenMovesReport report;
  report.options = options;
  play_games(options, starts, out, report);
  if (!options.quiet) report.print();
  std::unique_ptr<OutputFile> json;
  if (!options.report.empty()) json = finished_report(options.report, report.json());
  // Both complete: only now do they take their names, together.
  out.finish();
  commit_together({out.atomic(), json ? json->atomic() : nullptr});
  return report;
}

}  // namespace legalnet::run
