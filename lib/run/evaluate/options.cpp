#include "run/evaluate/options.h"

#include "run/device_rows.h"
#include "util/option_cli.h"

namespace legalnet::run {
namespace {

using R = options::Rows<EvaluateOptions>;

// The rows before the device's; "max_plies" is recorded after "seed" (a fact), as report.json
// always had it, although --help lists --max-plies first.
std::vector<options::Row<EvaluateOptions>> work_rows() {
  using O = EvaluateOptions;
  return {
      R::value(&O::model, "--model", "", "Model file (runs/NAME/model.safetensors)").required(),
      R::value(&O::data, "--data", "data", "Held-out dataset(s)"),
      R::value(&O::positions, "--positions", "positions",
               "FEN/EPD list(s), one position a line (gen_moves positions): a report card by situation on each"),
      R::value(&O::search, "--search", "search",
               "FEN/EPD list(s) whose positions start a search for positions the model gets wrong: legal edits "
               "(a piece moved, added, removed or two swapped, castling, en passant, side to move) that climb its "
               "worst margin"),
      R::value(&O::search_starts, "--search-starts", "search_starts", "Starts drawn from each --search list")
          .int_range(1, 100000)
          .show_default(),
      R::value(&O::search_budget, "--search-budget", "search_budget", "Evaluations per start of --search")
          .int_range(1, 1000000)
          .show_default(),
      R::value(&O::random_edit_budget, "--random-edit-budget", "random_edit_budget",
               "Evaluations per start of random legal edits from the same starts, the search's baseline (0: none)")
          .int_range(0, 1000000)
          .show_default(),
      R::value(&O::max_positions, "--max-positions", "max_positions", "Positions evaluated (0: all)")
          .range(0, options::MAX_COUNT)
          .show_default(),
      R::value(&O::threshold, "--threshold", "threshold", "Probability above which a move counts as predicted")
          .range(0, 1)
          .show_default(),
      R::value(&O::games, "--games", "games", "Games to play").int_range(0, 1000000).show_default(),
      R::choice(&O::opponent, "--opponent", "opponent", OPPONENTS,
                "random | self | adversary (of its legal moves, the one after which the model's mass on "
                "illegal moves is highest, one that ends the game only when all do)"),
      R::value(&O::adversary_games, "--adversary-games", "adversary_games",
               "Games against the adversary as well, reported beside --games' (same seed, sampling and cut)")
          .int_range(0, 1000000)
          .show_default(),
      R::flag(&O::greedy, "--greedy", "greedy", "Play the highest-scoring move instead of sampling"),
      R::flag(&O::resample_illegal, "!--stop-at-illegal", "",
              "End a game at the model's first illegal pick (default: resample among legal moves and go on)"),
      R::value(&O::max_plies, "--max-plies", "", "Cut games after this many plies (0: play to the end)")
          .int_range(0, 100000),
      R::value(&O::seed, "--seed", "seed", "Seed of colours, the random mover and sampling").show_default(),
      R::fact("max_plies"),
      R::value(&O::report, "--report", "", "Write every figure as JSON to this file"),
      R::value(&O::model_card, "--model-card", "",
               "Write the model's card (Markdown: its recipe, data and machine from the file's training record, "
               "and these figures) to this file, e.g. runs/NAME/MODEL_CARD.md"),
      R::value(&O::fen, "--fen", "", "Show the model's view of this position ('startpos' allowed)"),
      R::value(&O::top_k, "--top-k", "", "Moves listed (and drawn) for --fen").int_range(1, 4096).show_default(),
      R::value(&O::picture, "--picture", "", "Draw --fen with arrows and heat maps (.svg, or .png via rsvg-convert)"),
      R::value(&O::gallery, "--gallery", "",
               "Folder for boards of the model's mistakes: the held-out positions with the most illegal mass, "
               "and the illegal picks in games by reason (one .svg a group; the FENs are in the report)"),
  };
}

std::vector<options::Row<EvaluateOptions>> all_rows() {
  using O = EvaluateOptions;
  std::vector<options::Row<EvaluateOptions>> rows = work_rows();
  for (auto& row : device_rows<EvaluateOptions>()) rows.push_back(std::move(row));
  rows.push_back(kernels_row<EvaluateOptions>());
  for (const char* fact : {"device", "compute_precision", "kernels", "device_note"}) rows.push_back(R::fact(fact));
  rows.push_back(R::value(&O::batch_size, "--batch-size", "", "Inference batch (also games played at once)")
                     .int_range(1, 1 << 16)
                     .show_default());
  rows.push_back(R::flag(&O::quiet, "--quiet,-q", "", "No progress line"));
  rows.push_back(R::flag(&O::uci, "--uci", "",
                         "Be a UCI engine on stdin and stdout (for GUIs, cutechess, fastchess, python-chess; "
                         "docs/uci.md); --seed is the Seed option's default, --threads 0 means 1"));
  return rows;
}

}  // namespace

const char* const EVALUATE_ABOUT =
    "evaluate: measures a model written by train on a held-out dataset (BCE, precision/recall/F1, exact sets,\n"
    "errors by kind of move and position) and in games against a random mover or itself (plies before\n"
    "the first illegal move, counted as the predecessor did). Prints a table; --report writes JSON.";

const options::Table<EvaluateOptions>& evaluate_options() {
  static const options::Table<EvaluateOptions> table{"evaluate", all_rows()};
  return table;
}

void check_evaluate_options(const EvaluateOptions& o) {
  if (o.model.empty()) throw Error("no model: give --model runs/NAME/model.safetensors");
  evaluate_options().validate(o);
  if (o.data.empty() && o.positions.empty() && o.games == 0 && o.adversary_games == 0 && o.search.empty() &&
      o.fen.empty())
    throw Error("nothing to do: give --data, --positions, --games, --adversary-games, --search or --fen");
  if (!o.picture.empty() && o.fen.empty()) throw Error("--picture needs --fen");
}

}  // namespace legalnet::run
