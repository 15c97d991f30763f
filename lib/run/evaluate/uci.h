// evaluate --uci: a trained net as a UCI engine on standard input and output (the protocol is
// eval/uci.h; docs/uci.md says how to run it in a GUI or a match runner).
#pragma once

#include "run/evaluate/options.h"

namespace legalnet::run {

// Checks the options, loads the model and answers UCI commands on stdin and stdout until `quit`
// or the end of input; returns the exit status, 0.
int run_uci(const EvaluateOptions& options);

}  // namespace legalnet::run
