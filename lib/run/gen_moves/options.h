// gen_moves's options: the tool's and those of its subcommands perft and positions, each
// declared once in a table (util/option_table.h) from which the parser, --help, validate() and
// report.json's options (record()) read; beside each table its --help text and its checks.
#pragma once

#include <cstdint>
#include <string>

#include "util/option_table_fwd.h"

namespace legalnet::run {

struct GenMovesOptions {
  uint64_t games = 100;  // games in the whole (unsharded) run
  uint64_t seed = 0;
  std::string out = "-";         // "-" is stdout; .gz / .zst compress
  int threads = 1;               // 0: all cores
  std::string start = "random";  // random | placement | a FEN/EPD list (games/game_start.h)
  std::string start_fen;         // with start "random": this position instead of the standard one
  int max_plies = 0;             // 0: play every game to its end
  double pressure = 0;           // share of plies that press the opponent's king (games/random_game.h)
  int shard = 0;                 // this process makes shard `shard` of `num_shards`
  int num_shards = 1;
  bool quiet = false;
  std::string report;        // optional summary as JSON (--report)
  std::string command_line;  // for the summary's provenance
};

// gen_moves perft: the move generator's leaf counts below one position.
struct PerftOptions {
  std::string fen = "startpos";  // a FEN, or "startpos"
  int depth = 1;
};

// gen_moves positions: sets of positions to measure a model on, away from the positions random
// games reach (random placements, the perft suite and the trees below them), as FEN lists.
struct GenPositionsOptions {
  std::string start = "placement";  // placement | perft | startpos | exhaustive | a FEN/EPD list
  std::string material;             // exhaustive: the classes (games/material_class.h)
  uint64_t count = 0;               // placements drawn (placement), or a sample of the classes (exhaustive)
  int depth = 0;                    // also every position up to this many plies below each start
  uint64_t seed = 0;
  std::string out = "-";  // FEN list, one a line ("-": stdout; .gz / .zst compress)
};

// --help's opening paragraph, and the subcommands' descriptions.
extern const char* const GEN_MOVES_ABOUT;
extern const char* const PERFT_ABOUT;
extern const char* const GEN_POSITIONS_ABOUT;

// The tables, in --help's order. gen_moves_options().record() gives the options report.json
// records, given the fact "games_in_run" (--games).
const options::Table<GenMovesOptions>& gen_moves_options();
const options::Table<PerftOptions>& perft_options();
const options::Table<GenPositionsOptions>& gen_positions_options();

// The checks of a run's options, the tables' ranges (validate()) and those across options (the
// shard, the sets' --count and --material), before any work: throw legalnet::Error naming the
// option. The outputs are checked by the runs.
void check_gen_moves_options(const GenMovesOptions& options);
void check_perft_options(const PerftOptions& options);
void check_gen_positions_options(const GenPositionsOptions& options);

}  // namespace legalnet::run
