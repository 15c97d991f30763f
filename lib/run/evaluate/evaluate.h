// The evaluate tool: a trained model measured on a held-out dataset, on position sets and in
// games; its options are run/evaluate/options.h, its report run/evaluate/report.h.
#pragma once

#include "run/evaluate/options.h"
#include "run/evaluate/report.h"

namespace legalnet::run {

// Checks the options and every output, runs each pass asked for, prints the table on stdout and
// writes the report, the picture and the gallery (renamed together at the end).
EvaluateReport run_evaluate(const EvaluateOptions& options);

}  // namespace legalnet::run
