#include "run/evaluate/uci.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iostream>

#include "compute/device.h"
#include "eval/uci.h"
#include "run/evaluate/prediction.h"
#include "util/error.h"
#include "util/option_table.h"
#include "util/provenance.h"
#include "util/text.h"

namespace legalnet::run {

int run_uci(const EvaluateOptions& o) {
  if (o.model.empty()) throw Error("no model: give --model runs/NAME/model.safetensors");
  evaluate_options().validate(o);
  std::vector<std::string> others;  // the options of evaluate's other work
  for (const auto& [name, given] : {std::pair{"--data", !o.data.empty()},
                                    {"--positions", !o.positions.empty()},
                                    {"--games", o.games > 0},
                                    {"--fen", !o.fen.empty()},
                                    {"--report", !o.report.empty()},
                                    {"--picture", !o.picture.empty()},
                                    {"--gallery", !o.gallery.empty()}})
    if (given) others.push_back(name);
  if (!others.empty())
    throw Error(fmt::format("--uci answers on stdin and stdout; it takes no {}", fmt::join(others, ", ")));
  if (o.seed > eval::UCI_MAX_SEED)
    throw Error(
        fmt::format("--seed {} is above {}, the largest value of the UCI option Seed", o.seed, eval::UCI_MAX_SEED));
  // One thread by default: a single position is too small a forward pass to share, and match
  // runners play several engines at once.
  const int threads = o.threads > 0 ? o.threads : 1;
  const EvaluatedNet net = load_evaluated_net(o, threads);

  eval::UciEngine engine;
  engine.name = "legalnet " + tool_version();
  const nn::ModelConfig& config = net.model.config;
  engine.model = fmt::format("model {}: {}, {} parameters, inputs {}, on {} in {}, {} kernels", printable(o.model, 200),
                             config.describe(), nn::count_parameters(*net.model.net), config.inputs_name(),
                             net.device.str(), nn::precision_name(net.precision), nn::kernels_name(net.kernels));
  engine.predict = [&](const std::vector<const chess::Position*>& positions, std::vector<float>& probs) {
    probs = net.predict(positions);
  };
  engine.set_threads = nn::configure_threads;
  engine.threads = threads;
  engine.seed = o.seed;
  eval::run_uci(std::cin, std::cout, engine);
  return 0;
}

}  // namespace legalnet::run
