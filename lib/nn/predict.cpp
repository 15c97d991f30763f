#include "nn/predict.h"

#include "chess/movegen.h"
#include "encode/encode.h"
#include "encode/inputs.h"
#include "nn/loss.h"

namespace legalnet::nn {

std::vector<float> predict(const LoadedModel& model, const std::vector<const chess::Position*>& positions,
                           const torch::Device& device, Precision precision, double* bce_sum) {
  return predict(model.config, *model.net, positions, device, precision, bce_sum);
}

std::vector<float> predict(const ModelConfig& config, PolicyNet& net,
                           const std::vector<const chess::Position*>& positions, const torch::Device& device,
                           Precision precision, double* bce_sum) {
  torch::NoGradGuard no_grad;
  const encode::InputKind kind = config.inputs;
  const size_t row_floats = size_t(config.input_planes()) * encode::PLANE_SIZE;
  auto inputs = torch::empty({int64_t(positions.size()), config.input_planes(), 8, 8}, torch::kFloat32);
  std::vector<int8_t> sides(positions.size());
  for (size_t i = 0; i < positions.size(); ++i) {
    const encode::BoardState state = encode::BoardState::of(*positions[i]);
    encode::write_inputs(kind, state, inputs.data_ptr<float>() + i * row_floats);
    sides[i] = state.side;
  }
  const torch::Tensor logits = forward_logits(net, inputs.to(device), precision);
  if (bce_sum) {
    auto targets = torch::empty({int64_t(positions.size()), encode::MOVE_INDICES}, torch::kFloat32);
    std::vector<uint16_t> legal;
    for (size_t i = 0; i < positions.size(); ++i) {
      legal.clear();
      for (chess::Move m : chess::MoveList(*positions[i])) legal.push_back(uint16_t(encode::move_index(m)));
      encode::write_targets(kind, sides[i], legal.data(), legal.data() + legal.size(),
                            targets.data_ptr<float>() + i * encode::MOVE_INDICES);
    }
    *bce_sum += policy_loss({.logits = logits, .targets = targets.to(device)}, at::Reduction::Sum).item<double>();
  }
  const auto probs = torch::sigmoid(logits).to(torch::kCPU).contiguous();
  std::vector<float> out(probs.numel());
  for (size_t i = 0; i < positions.size(); ++i)
    encode::to_board_order(kind, sides[i], probs.data_ptr<float>() + i * encode::MOVE_INDICES,
                           out.data() + i * encode::MOVE_INDICES);
  return out;
}

}  // namespace legalnet::nn
