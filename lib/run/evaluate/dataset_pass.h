// evaluate's passes over the rows of its held-out datasets (--data).
#pragma once

#include "eval/gallery.h"
#include "run/evaluate/options.h"
#include "run/evaluate/prediction.h"
#include "run/evaluate/report.h"

namespace legalnet::run {

// The first --max-positions rows (all with 0), in batches: BCE, the anatomy, the situation card
// and the gallery's positions; and the rare kinds over every row, in this pass when it reads
// them all, else by count_rare_moves. Refuses datasets with no rows.
DatasetFigures measure_dataset(const EvaluatedNet& net, const EvaluateOptions& options, eval::Gallery& gallery);

// The rare pass: every row's position with a legal castling or en-passant move, in batches,
// into figures.rare (figures.scanned counts the rows read).
void count_rare_moves(const EvaluatedNet& net, const EvaluateOptions& options, DatasetFigures& figures);

}  // namespace legalnet::run
