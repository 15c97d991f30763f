#include "train/metrics.h"

#include <fmt/core.h>

#include <charconv>
#include <numeric>
#include <string_view>

#include "encode/encode.h"
#include "nn/loss.h"
#include "train/batches.h"

namespace legalnet::train {

Evaluation evaluate_loss(nn::PolicyNet& net, const CompactPositions& data, int batch_size, const torch::Device& device,
                         encode::InputKind inputs, nn::Precision precision) {
  torch::NoGradGuard no_grad;
  net.eval();
  Evaluation e;
  std::vector<uint32_t> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0u);
  double loss_sum = 0;
  for (size_t first = 0; first < rows.size(); first += size_t(batch_size)) {
    const size_t n = std::min(size_t(batch_size), rows.size() - first);
    Batch b = make_batch(data, rows.data() + first, n, false, inputs);
    // The trained logits are enough: a fixed-off index is never predicted and never legal.
    const auto t = forward_trained_logits(net, b.planes.to(device), b.targets.to(device), precision);
    loss_sum += policy_loss(t, at::Reduction::Sum).item<double>();
    const auto predicted = t.logits > 0, legal = t.targets > 0.5;
    e.true_positives += uint64_t((predicted & legal).sum().item<int64_t>());
    e.false_positives += uint64_t((predicted & ~legal).sum().item<int64_t>());
    e.false_negatives += uint64_t((~predicted & legal).sum().item<int64_t>());
  }
  e.positions = data.size();
  e.loss = data.size() ? loss_sum / (double(data.size()) * encode::MOVE_INDICES) : 0.0;
  return e;
}

Evaluation all_ranks_sum(Collectives& ranks, const Evaluation& mine) {
  if (ranks.world_size() == 1) return mine;
  auto t = torch::tensor({mine.loss * double(mine.positions) * encode::MOVE_INDICES, double(mine.positions),
                          double(mine.true_positives), double(mine.false_positives), double(mine.false_negatives)},
                         torch::kFloat64);
  ranks.all_reduce_sum(t);
  Evaluation all;
  all.positions = uint64_t(t[1].item<double>());
  all.loss = all.positions ? t[0].item<double>() / (double(all.positions) * encode::MOVE_INDICES) : 0.0;
  all.true_positives = uint64_t(t[2].item<double>());
  all.false_positives = uint64_t(t[3].item<double>());
  all.false_negatives = uint64_t(t[4].item<double>());
  return all;
}

namespace {

struct MetricsColumn {
  const char* name;
  std::string (*format)(const MetricsRow&);
  // Its TensorBoard scalar's tag, in a group TensorBoard draws together (train/, val/, perf/);
  // none for the step, TensorBoard's own axis.
  const char* tag;
};

constexpr MetricsColumn METRICS_COLUMNS[] = {
    {"step", [](const MetricsRow& r) { return fmt::format("{}", r.step); }, nullptr},
    {"epoch", [](const MetricsRow& r) { return fmt::format("{:.4f}", r.epoch); }, "train/epoch"},
    {"samples", [](const MetricsRow& r) { return fmt::format("{}", r.samples); }, "train/samples"},
    {"train_loss", [](const MetricsRow& r) { return fmt::format("{:.6g}", r.train_loss); }, "train/loss"},
    {"val_loss", [](const MetricsRow& r) { return fmt::format("{:.6g}", r.val_loss); }, "val/loss"},
    {"precision", [](const MetricsRow& r) { return fmt::format("{:.5f}", r.precision); }, "val/precision"},
    {"recall", [](const MetricsRow& r) { return fmt::format("{:.5f}", r.recall); }, "val/recall"},
    {"f1", [](const MetricsRow& r) { return fmt::format("{:.5f}", r.f1); }, "val/f1"},
    {"samples_per_s", [](const MetricsRow& r) { return fmt::format("{:.1f}", r.samples_per_s); }, "perf/samples_per_s"},
    {"lr", [](const MetricsRow& r) { return fmt::format("{:.6g}", r.lr); }, "train/lr"},
    {"elapsed_s", [](const MetricsRow& r) { return fmt::format("{:.1f}", r.elapsed_s); }, "perf/elapsed_s"},
};

}  // namespace

std::string metrics_header() {
  std::string line;
  for (const auto& c : METRICS_COLUMNS) line += fmt::format("{}{}", line.empty() ? "" : ",", c.name);
  return line + "\n";
}

std::string metrics_line(const MetricsRow& row) {
  std::string line;
  for (const auto& c : METRICS_COLUMNS) line += fmt::format("{}{}", line.empty() ? "" : ",", c.format(row));
  return line + "\n";
}

std::vector<tensorboard::Scalar> metrics_scalars(const MetricsRow& row) {
  std::vector<tensorboard::Scalar> scalars;
  for (const auto& c : METRICS_COLUMNS) {
    if (!c.tag) continue;
    const std::string text = c.format(row);
    double value = 0;
    std::from_chars(text.data(), text.data() + text.size(), value);  // "nan" and "inf" too
    scalars.push_back({c.tag, float(value)});
  }
  return scalars;
}

}  // namespace legalnet::train
