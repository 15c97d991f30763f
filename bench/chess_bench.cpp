// Speed of the chess core and of random-game generation (Google Benchmark). Results and the
// references they are compared with are recorded in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include "chess/movegen.h"
#include "chess/perft.h"
#include "games/random_game.h"
#include "pgn/pgn_writer.h"

namespace {

using namespace legalnet;

void BM_PerftStart(benchmark::State& state) {
  chess::Position pos;
  uint64_t nodes = 0;
  for (auto _ : state) nodes += chess::perft(pos, int(state.range(0)));
  state.counters["nodes/s"] = benchmark::Counter(double(nodes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PerftStart)->Arg(5)->Unit(benchmark::kMillisecond);

void BM_PerftKiwipete(benchmark::State& state) {
  chess::Position pos("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
  uint64_t nodes = 0;
  for (auto _ : state) nodes += chess::perft(pos, 4);
  state.counters["nodes/s"] = benchmark::Counter(double(nodes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PerftKiwipete)->Unit(benchmark::kMillisecond);

// Legal move generation alone, over positions of random games.
void BM_GenerateLegal(benchmark::State& state) {
  std::vector<chess::Position> positions;
  for (uint64_t g = 0; positions.size() < 4096; ++g) {
    GameRng rng(1, g);
    const GameRecord game = play_random_game(chess::Position(), rng, 0);
    chess::Position pos;
    for (size_t i = 0; i < game.moves.size() && positions.size() < 4096; ++i) {
      if (i % 9 == 0) positions.push_back(pos);
      pos.do_move(game.moves[i]);
    }
  }
  chess::Move moves[chess::MAX_MOVES];
  uint64_t generated = 0, calls = 0;
  for (auto _ : state) {
    for (const auto& pos : positions) {
      generated += uint64_t(chess::generate_legal(pos, moves) - moves);
      ++calls;
    }
  }
  benchmark::DoNotOptimize(generated);
  state.counters["positions/s"] = benchmark::Counter(double(calls), benchmark::Counter::kIsRate);
  state.counters["moves/s"] = benchmark::Counter(double(generated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GenerateLegal)->Unit(benchmark::kMillisecond);

// The random-game loop alone (move generation, a uniform pick, make, game-end rules).
void BM_RandomGames(benchmark::State& state) {
  const chess::Position start;
  uint64_t plies = 0, games = 0;
  for (auto _ : state) {
    GameRng rng(42, games++);
    plies += play_random_game(start, rng, 0).moves.size();
  }
  state.counters["plies/s"] = benchmark::Counter(double(plies), benchmark::Counter::kIsRate);
  state.counters["games/s"] = benchmark::Counter(double(games), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RandomGames)->Unit(benchmark::kMicrosecond);

// The same games written as PGN text (SAN replay, tags, wrapping), without file I/O.
void BM_RandomGamesAsPgn(benchmark::State& state) {
  const chess::Position start;
  uint64_t games = 0;
  std::string text;
  const PgnTags tags = {{"Event", "bench"}, {"Result", "*"}};
  for (auto _ : state) {
    GameRng rng(42, games++);
    const GameRecord game = play_random_game(start, rng, 0);
    text.clear();
    append_pgn_game(start, game.moves, tags, text);
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["games/s"] = benchmark::Counter(double(games), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RandomGamesAsPgn)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
