// The train tool: BCE-with-logits training of a policy net on legalnet datasets. Its options
// (options.h), its report (report.h), and the stages run_train wires: the data plan and the
// rows (data_plan.h, load_data.h), the optimizer (optimizer.h) and the loop (training_loop.h).
#pragma once

#include "run/train/options.h"
#include "run/train/report.h"

namespace legalnet::run {

// Trains (or resumes) the run in `options.out`; rank 0 writes the run folder and --report.
TrainReport run_train(const TrainOptions& options);

}  // namespace legalnet::run
