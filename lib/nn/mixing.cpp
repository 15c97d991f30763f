// The resnet's mixing layers (train --mixing, nn/models.h): line mixing and the ray scan.
#include <cmath>
#include <vector>

#include "kernels/kernels.h"
#include "nn/models.h"

namespace legalnet::nn {

namespace {

// The tap of each (square, square) pair, squares numbered row * 8 + column of the planes (the
// table is the same whichever of the two is the rank: lines map to lines).
std::vector<int64_t> line_taps() {
  std::vector<int64_t> tap(64 * 64, LineMixingImpl::TAPS);
  const int steps[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};  // along a row, a column, both diagonals
  for (int direction = 0; direction < 4; ++direction)
    for (int from = 0; from < 64; ++from)
      for (int distance = -7; distance <= 7; ++distance) {
        const int row = from / 8 + distance * steps[direction][0], column = from % 8 + distance * steps[direction][1];
        if (distance == 0 || row < 0 || row > 7 || column < 0 || column > 7) continue;
        tap[size_t(from * 64 + row * 8 + column)] = direction * 14 + (distance < 0 ? distance + 7 : distance + 6);
      }
  return tap;
}

}  // namespace

LineMixingImpl::LineMixingImpl(int channels) : tap_of(line_taps()) {
  // The bound of torch's default initialisation of a layer with TAPS inputs.
  const double bound = 1 / std::sqrt(double(TAPS));
  weight = register_parameter("weight", torch::empty({channels, TAPS}).uniform_(-bound, bound));
}

torch::Tensor LineMixingImpl::matrices() {
  const int64_t channels = weight.size(0);
  // [C,TAPS] -> [C,TAPS+1] (the last a zero: squares off each other's lines) -> [C,64,64]
  return torch::constant_pad_nd(weight, {0, 1}).index_select(1, tap_of.on(weight.device())).view({channels, 64, 64});
}

torch::Tensor LineMixingImpl::forward(torch::Tensor x) {
  const int64_t batch = x.size(0), channels = x.size(1);
  // [B,C,8,8] -> [B,64,C] (a view when x is channels-last) -> mixed [B,64,C] -> back as [B,C,8,8]
  const auto squares = x.permute({0, 2, 3, 1}).reshape({batch, 64, channels});
  const auto mixed = torch::einsum("cij,bjc->bic", {matrices(), squares});
  return x + mixed.reshape({batch, 8, 8, channels}).permute({0, 3, 1, 2});
}

namespace {

// The square `steps` steps back from `square` along direction d, or 64 (the padding square) off
// the board; the padding square stays itself.
int64_t back(int square, size_t d, int steps) {
  const int source = square == 64 ? -1 : ray_square(square, d, -steps);
  return source < 0 ? 64 : source;
}

// Over [8 directions][65 squares]: each entry's source `steps` back, within one board's squares
// (first, from [65]) or within its own direction (doubling steps, from [8][65]).
std::vector<int64_t> ray_gather(int steps, bool within_direction) {
  std::vector<int64_t> index;
  for (size_t d = 0; d < RAY_DIRECTIONS.size(); ++d)
    for (int s = 0; s <= 64; ++s) index.push_back((within_direction ? int64_t(d) * 65 : 0) + back(s, d, steps));
  return index;
}

}  // namespace

RayScanImpl::RayScanImpl(int channels)
    : rays(ray_scan_width(channels)),
      first_step(ray_gather(1, false)),
      doubling{DeviceIndex(ray_gather(1, true)), DeviceIndex(ray_gather(2, true)), DeviceIndex(ray_gather(4, true))} {
  project = register_module("project", torch::nn::Linear(channels, 2 * rays));
  out = register_module(
      "out", torch::nn::Linear(torch::nn::LinearOptions(int64_t(RAY_DIRECTIONS.size()) * rays, channels).bias(false)));
}

torch::Tensor RayScanImpl::scan_torch(const torch::Tensor& values, const torch::Tensor& gates) {
  // h = a + b * shift(h) with a = shift(v), b = shift(g), shift one square back along d: after
  // doubling steps of 1, 2 and 4 squares (A += B * shift(A), B *= shift(B)) A sums all 7.
  const int64_t boards = values.size(0), r = values.size(2), directions = int64_t(RAY_DIRECTIONS.size());
  const auto pad = [](const torch::Tensor& t) { return torch::constant_pad_nd(t, {0, 0, 0, 1}); };  // square 64 = 0
  const auto& first = first_step.on(values.device());
  auto a = pad(values).index_select(1, first), b = pad(gates).index_select(1, first);  // [B, 8*65, R]
  for (size_t i = 0; i < doubling.size(); ++i) {
    const auto& index = doubling[i].on(values.device());
    a = a + b * a.index_select(1, index);
    if (i + 1 < doubling.size()) b = b * b.index_select(1, index);
  }
  return a.view({boards, directions, 65, r}).narrow(2, 0, 64).permute({0, 2, 1, 3}).contiguous();
}

torch::Tensor RayScanImpl::forward(torch::Tensor x, Kernels kernels) {
  const int64_t boards = x.size(0), channels = x.size(1);
  // [B,C,8,8] -> [B,64,C] (a view when x is channels-last) -> out [B,64,C] -> back as [B,C,8,8]
  const auto squares = x.permute({0, 2, 3, 1}).reshape({boards, 64, channels});
  const auto planes = [&](const torch::Tensor& y) { return y.reshape({boards, 8, 8, channels}).permute({0, 3, 1, 2}); };
  if (kernels == Kernels::BOARD && board_ray_layer_applies(squares, project->weight, project->bias, out->weight))
    return planes(board_ray_layer(squares, project->weight, project->bias, out->weight));
  // values and gate logits [B,64,2R] -> h [B,64,8,R]
  const auto projected = project(squares);
  const auto h = scan_torch(projected.narrow(2, 0, rays), torch::sigmoid(projected.narrow(2, rays, rays)));
  return x + planes(out(h.reshape({boards, 64, int64_t(RAY_DIRECTIONS.size()) * rays})));
}

}  // namespace legalnet::nn
