#include "run/gen_moves.h"

#include <fmt/core.h>

#include <cstdlib>
#include <deque>
#include <future>
#include <nlohmann/json.hpp>

#include "games/game_start.h"
#include "games/random_game.h"
#include "pgn/pgn_writer.h"
#include "util/console.h"
#include "util/error.h"
#include "util/files.h"
#include "util/progress.h"
#include "util/provenance.h"
#include "util/thread_pool.h"

namespace legalnet::run {
namespace {

constexpr int MAX_PLIES_INDEX = chess::TERMINATION_NB;
constexpr uint64_t GAMES_PER_BATCH = 64;

std::string termination_tag(const GameRecord& g) {
  return g.termination == chess::Termination::NONE ? "max plies" : std::string(chess::termination_name(g.termination));
}

// Plays games [first, last) and returns their PGN text and statistics.
void play_batch(const GenMovesOptions& options, const GameStarts& starts, uint64_t first, uint64_t last,
                std::string& text, GenMovesStats& stats) {
  PgnTags tags;
  for (uint64_t index = first; index < last; ++index) {
    GameRng rng(options.seed, index);
    const chess::Position start = starts.position(index, rng);
    GameRecord game = play_random_game(start, rng, options.max_plies);
    const std::string result(chess::result_string(game.termination, game.final_side_to_move));
    tags.assign({{"Event", "legalnet random game"},
                 {"Site", "legalnet gen_moves"},
                 {"Date", "????.??.??"},
                 {"Round", std::to_string(index)},
                 {"White", "random"},
                 {"Black", "random"},
                 {"Result", result},
                 {"Termination", termination_tag(game)},
                 {"Seed", std::to_string(options.seed)},
                 {"PlyCount", std::to_string(game.moves.size())}});
    if (starts.set_up()) {
      tags.emplace_back("SetUp", "1");
      tags.emplace_back("FEN", start.fen());
    }
    append_pgn_game(start, game.moves, tags, text);
    ++stats.games;
    stats.plies += game.moves.size();
    ++stats.endings[game.termination == chess::Termination::NONE ? MAX_PLIES_INDEX : int(game.termination)];
  }
}

// The summary as JSON, complete but not yet renamed onto --report: the PGN and it take their
// names together.
std::unique_ptr<OutputFile> write_report(const GenMovesOptions& options, const GenMovesStats& stats,
                                         const GameRange& range) {
  nlohmann::ordered_json j = provenance_json("gen_moves", options.command_line);
  j["seed"] = options.seed;
  j["start"] = options.start;
  j["games_in_run"] = options.games;
  j["shard"] = options.shard;
  j["num_shards"] = options.num_shards;
  j["first_game"] = range.first;
  j["games"] = stats.games;
  j["plies"] = stats.plies;
  j["mean_plies"] = stats.games ? double(stats.plies) / double(stats.games) : 0.0;
  nlohmann::ordered_json endings;
  for (int i = 1; i <= MAX_PLIES_INDEX; ++i) endings[std::string(ending_name(i))] = stats.endings[i];
  j["endings"] = endings;
  j["seconds"] = stats.seconds;
  j["games_per_second"] = stats.seconds > 0 ? double(stats.games) / stats.seconds : 0.0;
  j["plies_per_second"] = stats.seconds > 0 ? double(stats.plies) / stats.seconds : 0.0;
  auto out = std::make_unique<OutputFile>(options.report);
  out->write(j.dump(2) + "\n");
  out->finish();
  return out;
}

void print_summary(const GenMovesStats& s) {
  const double secs = std::max(s.seconds, 1e-9);
  say("gen_moves: {} games, {} plies, {:.1f} plies/game, {:.2f} s, {} games/s, {} plies/s\n", s.games, s.plies,
      s.games ? double(s.plies) / double(s.games) : 0.0, s.seconds, human_count(double(s.games) / secs),
      human_count(double(s.plies) / secs));
  for (int i = 1; i <= MAX_PLIES_INDEX; ++i) {
    if (!s.endings[i]) continue;
    say("  {:<24} {:>10} {:6.2f}%\n", ending_name(i), s.endings[i],
        100.0 * double(s.endings[i]) / double(std::max<uint64_t>(s.games, 1)));
  }
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1000000)
    throw Error(std::string("environment variable ") + name + "='" + v + "' is not a count");
  return int(x);
}

}  // namespace

std::string_view ending_name(int i) {
  return i == MAX_PLIES_INDEX ? std::string_view("max plies") : chess::termination_name(chess::Termination(i));
}

void GenMovesStats::add(const GenMovesStats& other) {
  games += other.games;
  plies += other.plies;
  for (size_t i = 0; i < endings.size(); ++i) endings[i] += other.endings[i];
}

GameRange shard_range(uint64_t games, int shard, int num_shards) {
  const auto m = uint64_t(num_shards), k = uint64_t(shard);
  // 128-bit products: games * k overflows 64 bits only for absurd runs, but be exact anyway.
  const auto first = uint64_t((unsigned __int128)games * k / m);
  const auto last = uint64_t((unsigned __int128)games * (k + 1) / m);
  return {first, last};
}

void apply_slurm_array_shard(GenMovesOptions& options, bool shard_given) {
  if (shard_given) return;
  const int count = env_int("SLURM_ARRAY_TASK_COUNT", 0);
  if (count == 0) return;
  const int id = env_int("SLURM_ARRAY_TASK_ID", -1);
  const int min = env_int("SLURM_ARRAY_TASK_MIN", 0);
  if (id < min || id - min >= count)
    throw Error(fmt::format("SLURM_ARRAY_TASK_ID={} is outside the array (min {}, count {}): submit with --array=0-{}",
                            id, min, count, count - 1));
  options.shard = id - min;
  options.num_shards = count;
}

GenMovesStats run_gen_moves(const GenMovesOptions& options) {
  if (options.num_shards < 1) throw Error("--num-shards must be at least 1");
  if (options.shard < 0 || options.shard >= options.num_shards)
    throw Error(fmt::format("--shard {} is not in 0..{}", options.shard, options.num_shards - 1));
  if (options.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
  const int threads = worker_threads(options.threads);
  if (options.max_plies < 0) throw Error("--max-plies must not be negative");
  std::vector<NamedPath> inputs;
  if (options.start != "random" && options.start != "placement") inputs.push_back({"--start", options.start});
  check_outputs_are_not_inputs({{"--out", options.out}, {"--report", options.report}}, inputs);
  // Both outputs writable, and what the JSON will hold is text: found now, not after the games.
  check_output_writable({"--out", options.out});
  check_output_writable({"--report", options.report});
  if (!options.report.empty()) {
    check_json_text("--out", options.out, {"--report", options.report});
    check_json_text("the command line", options.command_line, {"--report", options.report});
  }
  const GameStarts starts(options.start, options.start_fen);

  const GameRange range = shard_range(options.games, options.shard, options.num_shards);
  const uint64_t count = range.last - range.first;
  OutputFile out(options.out);
  Progress progress("games", count, !options.quiet && stderr_is_terminal());

  // Workers play batches; this thread writes them in submission order, so the output does not
  // depend on --threads. The window of batches in flight bounds the memory held.
  struct PlayedBatch {
    std::string text;
    GenMovesStats stats;
  };
  ThreadPool pool(threads);
  std::deque<std::future<PlayedBatch>> in_flight;
  const size_t window = size_t(threads) * 4;
  GenMovesStats total;
  auto write_front = [&] {
    const PlayedBatch batch = in_flight.front().get();
    in_flight.pop_front();
    out.write(batch.text);
    total.add(batch.stats);
    progress.update(total.games);
  };
  for (uint64_t first = range.first; first < range.last; first += GAMES_PER_BATCH) {
    const uint64_t last = std::min(first + GAMES_PER_BATCH, range.last);
    in_flight.push_back(pool.submit([&options, &starts, first, last] {
      PlayedBatch batch;
      play_batch(options, starts, first, last, batch.text, batch.stats);
      return batch;
    }));
    while (in_flight.size() > window) write_front();
  }
  while (!in_flight.empty()) write_front();

  out.finish();
  progress.finish();
  total.seconds = progress.elapsed_seconds();
  if (!options.quiet) print_summary(total);
  std::unique_ptr<OutputFile> report;
  if (!options.report.empty()) report = write_report(options, total, range);
  // Both complete: only now does either take its name.
  out.commit();
  if (report) report->commit();
  return total;
}

}  // namespace legalnet::run
