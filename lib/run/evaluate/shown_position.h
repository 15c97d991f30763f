// evaluate --fen: the model's view of one position, its top moves and, with --picture, a drawing.
#pragma once

#include <optional>

#include "chess/position.h"
#include "run/evaluate/options.h"
#include "run/evaluate/prediction.h"
#include "run/evaluate/report.h"
#include "util/files.h"

namespace legalnet::run {

// --fen read before any costly work ('startpos' allowed; void castling rights dropped with a
// note on stderr); none without --fen. Throws legalnet::Error "--fen: ..." for a bad FEN.
std::optional<chess::Position> read_shown_position(const EvaluateOptions& options);

// The --top-k moves of `pos`; with --picture, its drawing joins `outputs`.
ShownPosition show_position(const EvaluatedNet& net, const chess::Position& pos, const EvaluateOptions& options,
                            Outputs& outputs);

}  // namespace legalnet::run
