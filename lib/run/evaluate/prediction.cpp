#include "run/evaluate/prediction.h"

#include "compute/arithmetic.h"
#include "compute/device.h"
#include "encode/inputs.h"
#include "nn/forward.h"
#include "nn/predict.h"
#include "run/training_record.h"
#include "util/json.h"

namespace legalnet::run {

std::vector<float> EvaluatedNet::predict(const std::vector<const chess::Position*>& positions, double* bce_sum) const {
  return nn::predict(model, positions, device, precision, bce_sum);
}

std::vector<float> EvaluatedNet::predict(const std::vector<chess::Position>& positions, double* bce_sum) const {
  std::vector<const chess::Position*> pointers;
  pointers.reserve(positions.size());
  for (const auto& p : positions) pointers.push_back(&p);
  return predict(pointers, bce_sum);
}

EvaluatedNet load_evaluated_net(const EvaluateOptions& o, int threads) {
  EvaluatedNet net;
  net.device = nn::pick_device(o.device);
  nn::configure_threads(threads);
  nn::keep_freed_memory();
  net.model = nn::load_model(o.model, net.device);
  // As train resolves them: the board kernels' forward is what its validation passes run.
  const nn::Arithmetic arithmetic = nn::resolve_arithmetic(
      o.compute_precision, o.kernels, nn::model_spec(net.model.config.kind).board_convolutions, net.device);
  net.precision = arithmetic.precision;
  net.kernels = arithmetic.kernels;
  nn::configure_for_speed(net.device, net.precision);
  net.model.net->eval();
  nn::choose_memory_format(*net.model.net);
  net.model.net->use_kernels(net.kernels);
  return net;
}

ModelFacts model_facts(const EvaluatedNet& net, const std::string& model_path) {
  const nn::ModelConfig& c = net.model.config;
  const encode::InputSpec& inputs = encode::input_spec(c.inputs);
  return {.description = c.describe(),
          .config = nlohmann::ordered_json::parse(c.to_json()),
          .input_kind = c.inputs_name(),
          .input_kind_from_move_generator = inputs.from_move_generator,
          .input_kind_description = inputs.description,
          .parameters = nn::count_parameters(*net.model.net),
          .training = with_provenance(parse_json<nlohmann::ordered_json>(net.model.training_json), model_path)};
}

RunDevice run_device(const EvaluatedNet& net, const EvaluateOptions& o) {
  RunDevice d{.device = net.device.str(),
              .precision = nn::precision_name(net.precision),
              .kernels = nn::kernels_name(net.kernels),
              .note = std::nullopt};
  if (o.device == "auto" && !net.device.is_cuda()) d.note = nn::cpu_fallback_reason();
  return d;
}

}  // namespace legalnet::run
