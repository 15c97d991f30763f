// evaluate's figures in TensorBoard, beside train's curves: when the model it measured is a run
// folder's model.safetensors (train's options.json beside it records this very model, and the
// run's events file is there), the headline figures and the held-out rows' situation card as
// scalars at the model's step, in the folder's own events file (train/run_folder.h's
// EVALUATE_EVENTS_FILE), so that runs compare on clean games and illegal picks. No torch here.
#pragma once

#include <string>
#include <vector>

#include "run/evaluate/report.h"
#include "train/tensorboard.h"
#include "util/files.h"

namespace legalnet::run {

// The tags of the headline figures: the metrics train's hparams name (TensorBoard's HPARAMS
// table compares runs on them), beside val/loss and val/f1.
const std::vector<std::string>& headline_tags();

// The report's figures as scalars, each a share in 0..1:
//   eval/clean_games, eval/illegal_pick_rate, eval/illegal_pick_rate_in_check   (--games)
//   eval/adversary_clean_games, eval/adversary_illegal_pick_rate, ..._in_check  (--adversary-games)
//   eval/exact_sets                                        (the --data rows)
//   eval/exact_sets/SET, eval/illegal_mass/SET             (each --positions list with a legal move;
//                                                           SET its file name up to the first dot)
//   situations/SITUATION/exact, situations/SITUATION/illegal_mass  (the --data rows' card, rows
//                                                           with positions: "in_check", "pinned_piece"...)
std::vector<train::tensorboard::Scalar> tensorboard_scalars(const EvaluateReport& report);

// The run folder `report`'s model lies in, when it is a run's model.safetensors with the run
// beside it (options.json recording this model, the events file of train); empty otherwise (a
// copied or exported model, a folder trained again since, a run that is training now).
std::string model_run_folder(const EvaluateReport& report);

// The folder's evaluate events file, added to `outputs` (renamed with the report): the records
// of earlier evaluations at earlier steps of the run (a model --resume trained on), then one event
// at the model's steps_done holding tensorboard_scalars() and the command line (text). Evaluating
// the same model again replaces its step's figures. Nothing is written without a run folder or
// figures; a folder evaluate may not write to is said (unless --quiet) and left alone. Returns
// the file's path, or "" when none is written.
std::string add_tensorboard_figures(const EvaluateReport& report, Outputs& outputs);

}  // namespace legalnet::run
