#include "run/gen_moves/options.h"

#include <fmt/core.h>

#include "games/material_class.h"
#include "run/threads_option.h"
#include "util/error.h"
#include "util/option_cli.h"

namespace legalnet::run {

const char* const GEN_MOVES_ABOUT =
    "gen_moves: plays random legal chess games (each move uniform among the legal moves, or with --pressure some\n"
    "pressing the opponent's king) and writes them as PGN.\n"
    "Games end by python-chess's is_game_over() rules. The same --seed gives byte-identical output for any\n"
    "--threads; shard K of M holds the contiguous block of games [K*N/M, (K+1)*N/M).";
const char* const PERFT_ABOUT = "Count the leaves of the legal move tree, in Stockfish's 'go perft' format";
const char* const GEN_POSITIONS_ABOUT =
    "Write a set of positions as a FEN list, to measure a model on (evaluate --positions)";

const options::Table<GenMovesOptions>& gen_moves_options() {
  using O = GenMovesOptions;
  using R = options::Rows<O>;
  static const options::Table<O> table{
      "gen_moves",
      {
          R::value(&O::games, "--games,-n", "", "Number of games in the whole run")
              .range(0, options::MAX_COUNT)
              .show_default(),
          R::value(&O::seed, "--seed,-s", "seed", "Random seed").show_default(),
          R::value(&O::out, "--out,-o", "", "Output PGN ('-' for stdout; .gz or .zst compress)").show_default(),
          threads_option(&O::threads, "Worker threads"),
          R::value(&O::start, "--start", "start",
                   "Where games start: random (the standard position, or --start-fen), placement (a random legal "
                   "placement of material per game: castling and en-passant rights where it allows them), sparse "
                   "(the two kings and one to three more pieces, placed at random), edited (a random game's position "
                   "after one to eight random legal edits), lopsided (a king and up to three pieces against five to "
                   "fifteen, placed at random), or a FEN/EPD list, one a line "
                   "(game i from line i mod N; name a file called 'placement' ./placement)")
              .show_default(),
          R::value(&O::start_fen, "--start-fen", "", "Start every game from this FEN instead of the start position"),
          R::value(&O::max_plies, "--max-plies", "", "Stop a game after this many plies (Result '*'); 0: no limit")
              .show_default()
              .int_range(0, 100000),
          R::value(&O::pressure, "--pressure", "pressure",
                   "Share of plies (0 to 1) that play, instead of a uniform legal move, one after which the "
                   "opponent's king is pressed hardest (checkers, pinned pieces, attacked squares beside it): games "
                   "rich in the positions where check and pins decide the legal moves")
              .show_default()
              .range(0, 1),
          // report.json records --games here, after "start", as "games_in_run" (its "games" is the
          // shard's count): a fact the report gives.
          R::fact("games_in_run"),
          // Its range depends on --num-shards: check_gen_moves_options checks it.
          R::value(&O::shard, "--shard", "shard",
                   "Make only shard K (0-based) of --num-shards; default from "
                   "SLURM_ARRAY_TASK_ID when SLURM_ARRAY_TASK_COUNT is set"),
          R::value(&O::num_shards, "--num-shards", "num_shards", "Number of shards")
              .show_default()
              .int_range(1, 1000000),
          R::flag(&O::quiet, "--quiet,-q", "", "No progress line and no summary"),
          R::value(&O::report, "--report", "", "Also write the summary as JSON to this file"),
          R::alias("--stats-json", "--report"),
      }};
  return table;
}

const options::Table<PerftOptions>& perft_options() {
  using O = PerftOptions;
  using R = options::Rows<O>;
  static const options::Table<O> table{
      "gen_moves perft",
      {
          R::value(&O::fen, "--fen", "", "Position as FEN, or 'startpos'").show_default(),
          R::value(&O::depth, "--depth", "", "Depth in plies").required().int_range(1, 20),
      }};
  return table;
}

const options::Table<GenPositionsOptions>& gen_positions_options() {
  using O = GenPositionsOptions;
  using R = options::Rows<O>;
  static const options::Table<O> table{
      "gen_moves positions",
      {
          R::value(&O::start, "--start", "",
                   "placement (random legal placements), perft (the move generator's perft suite), startpos (the "
                   "standard position), exhaustive (every legal position of --material's classes) or a FEN/EPD list")
              .show_default(),
          R::value(&O::material, "--material", "",
                   "--start exhaustive: the pieces beside the two kings as FEN letters (PNBRQ white, pnbrq black), "
                   "? for any one, none for the kings alone; at most two (Q: king and queen against king; ?: all "
                   "ten such classes); white to move"),
          R::value(&O::count, "--count", "",
                   "Placements to draw (--start placement), or positions to sample from --material's classes in "
                   "turn instead of all of them (--start exhaustive)")
              .range(0, options::MAX_COUNT),
          R::value(&O::depth, "--depth", "",
                   "Add every position up to this many plies below each start (5 from startpos: 1.5 M FENs)")
              .int_range(0, 5)
              .show_default(),
          R::value(&O::seed, "--seed", "", "Random seed (--start placement)").show_default(),
          R::value(&O::out, "--out,-o", "", "Output FEN list ('-' for stdout; .gz or .zst compress)").show_default(),
      }};
  return table;
}

void check_gen_moves_options(const GenMovesOptions& o) {
  gen_moves_options().validate(o);
  if (o.shard < 0 || o.shard >= o.num_shards)
    throw Error(fmt::format("--shard {} is not in 0..{}", o.shard, o.num_shards - 1));
}

void check_perft_options(const PerftOptions& o) { perft_options().validate(o); }

void check_gen_positions_options(const GenPositionsOptions& o) {
  gen_positions_options().validate(o);  // --depth at most 5: the trees grow about 30-fold a ply
  if (o.start == "placement" && o.count == 0) throw Error("--start placement needs --count (how many placements)");
  if (o.start != "placement" && o.start != "exhaustive" && o.count != 0)
    throw Error("--count goes with --start placement or exhaustive only");
  if ((o.start == "exhaustive") != !o.material.empty())
    throw Error("--material goes with --start exhaustive, and it needs one");
  if (o.start == "exhaustive") (void)material_classes(o.material);  // a bad spec before any work
}

}  // namespace legalnet::run
