#include "nn/loss.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/arithmetic.h"
#include "encode/encode.h"
#include "kernels/kernels.h"
#include "nn/models.h"
#include "util/error.h"

namespace legalnet::nn {

namespace {

// Trained logits (fp32 [B,K]) with the targets' columns at their move indices `moves`.
TrainedLogits with_targets(torch::Tensor logits, const torch::Tensor& targets, const torch::Tensor& moves) {
  TrainedLogits t;
  t.logits = std::move(logits);
  t.fixed_off = encode::MOVE_INDICES - moves.numel();
  t.targets = t.fixed_off ? targets.index_select(1, moves) : targets;
  return t;
}

}  // namespace

TrainedLogits forward_trained_logits(PolicyNet& net, const torch::Tensor& planes, const torch::Tensor& targets,
                                     Precision precision) {
  return with_targets(forward_logits_of(net, planes, precision, &PolicyNet::forward_trained), targets,
                      net.trained_moves(targets.device()));
}

namespace {

// The BCE over all rows x 4096 indices from the sum over the trained logits: each fixed-off
// index has target 0, so its BCE is log(1 + e^FIXED_OFF_LOGIT).
torch::Tensor over_all_indices(const torch::Tensor& trained_sum, int64_t rows, int64_t fixed_off,
                               at::Reduction::Reduction reduction) {
  const double fixed_off_sum = double(rows) * double(fixed_off) * std::log1p(std::exp(double(FIXED_OFF_LOGIT)));
  const auto sum = trained_sum + fixed_off_sum;
  if (reduction == at::Reduction::Sum) return sum;
  return sum / (double(rows) * double(encode::MOVE_INDICES));
}

}  // namespace

torch::Tensor policy_loss(const TrainedLogits& t, at::Reduction::Reduction reduction, double margin) {
  const auto scored = margin == 0 ? t.logits : t.logits - margin * (2 * t.targets - 1);
  return over_all_indices(torch::binary_cross_entropy_with_logits(scored, t.targets, {}, {}, at::Reduction::Sum),
                          t.logits.size(0), t.fixed_off, reduction);
}

namespace {

// Where a source of logits lies: its rows (fp32 or bf16, contiguous) and the column of each
// trained logit.
struct Source {
  const char* at = nullptr;
  size_t row_bytes = 0;
  bool bf16 = false;
  const int64_t* columns = nullptr;
  static Source of(const torch::Tensor& scores, const torch::Tensor& columns) {
    return {static_cast<const char*>(scores.data_ptr()), size_t(scores.size(1)) * scores.element_size(),
            scores.scalar_type() == at::kBFloat16, columns.data_ptr<int64_t>()};
  }
  float at_column(int64_t r, int64_t j) const {
    const char* row = at + size_t(r) * row_bytes;
    return bf16 ? float(reinterpret_cast<const c10::BFloat16*>(row)[columns[j]])
                : reinterpret_cast<const float*>(row)[columns[j]];
  }
};

// A zero gradient [rows, width] in `dtype` with gradient[r, j] * scale written at columns[j].
torch::Tensor scattered(const torch::Tensor& gradient, const int64_t* columns, int64_t width, at::ScalarType dtype,
                        float scale) {
  const int64_t rows = gradient.size(0), k = gradient.size(1);
  auto out = torch::empty({rows, width}, torch::TensorOptions(dtype));
  const float* g = gradient.data_ptr<float>();
  auto fill = [&](auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        T* row = o + r * width;
        std::fill(row, row + width, T(0.0f));
        for (int64_t i = 0; i < k; ++i) row[columns[i]] = T(g[r * k + i] * scale);
      }
    });
  };
  if (dtype == at::kBFloat16)
    fill(out.data_ptr<at::BFloat16>());
  else
    fill(out.data_ptr<float>());
  return out;
}

// Sum over a batch of BCE(sigmoid(z), targets[:, target_columns]) with z = scores[:, columns]
// (+ extra[:, extra_columns] when extra is defined), less the margin, as one autograd node:
// forward keeps each logit's sigmoid(z) - t (fp32 [B,K]), backward writes it, times the incoming
// gradient, into a zero gradient of each source in its dtype.
class GatheredBce : public torch::autograd::Function<GatheredBce> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& scores,
                               const torch::Tensor& columns, const torch::Tensor& extra,
                               const torch::Tensor& extra_columns, const torch::Tensor& targets,
                               const torch::Tensor& target_columns, double margin) {
    const int64_t rows = scores.size(0), k = columns.numel();
    const bool two = extra.dim() == 2;  // one source: an empty placeholder (autograd wants defined inputs)
    auto gradient = torch::empty({rows, k}, torch::kFloat32);
    std::vector<double> row_loss(size_t(rows), 0.0);
    const BoardIsa isa = board_isa();
    const Source first = Source::of(scores, columns);
    const Source second = two ? Source::of(extra, extra_columns) : Source{};
    std::vector<int64_t> in_order(size_t(two ? k : 0));
    std::iota(in_order.begin(), in_order.end(), int64_t(0));
    const float* targets_at = targets.data_ptr<float>();
    const int64_t* target_cols = target_columns.data_ptr<int64_t>();
    float* gradient_at = gradient.data_ptr<float>();
    at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
      std::vector<float> work(size_t(bce_row_work(k))), sum(size_t(two ? k : 0));
      for (int64_t r = begin; r < end; ++r) {
        BceRow row{.scores = first.at + size_t(r) * first.row_bytes,
                   .bf16 = first.bf16,
                   .columns = first.columns,
                   .targets = targets_at + r * targets.size(1),
                   .target_columns = target_cols,
                   .k = k,
                   .margin = float(margin)};
        if (two) {  // the two sources' logits summed in fp32, then read in order
          for (int64_t j = 0; j < k; ++j) sum[size_t(j)] = first.at_column(r, j) + second.at_column(r, j);
          row.scores = sum.data();
          row.bf16 = false;
          row.columns = in_order.data();
        }
        row_loss[size_t(r)] = bce_row(isa, row, work.data(), gradient_at + r * k);
      }
    });
    double total = 0;
    for (const double v : row_loss) total += v;
    ctx->save_for_backward({gradient, columns, two ? extra_columns : columns});
    ctx->saved_data["width"] = scores.size(1);
    ctx->saved_data["dtype"] = scores.scalar_type();
    ctx->saved_data["extra_width"] = two ? extra.size(1) : int64_t(0);
    ctx->saved_data["extra_dtype"] = two ? extra.scalar_type() : scores.scalar_type();
    return torch::scalar_tensor(total, torch::kFloat32);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const float scale = grads[0].item<float>();
    const auto first = scattered(saved[0], saved[1].data_ptr<int64_t>(), ctx->saved_data["width"].toInt(),
                                 ctx->saved_data["dtype"].toScalarType(), scale);
    const int64_t extra_width = ctx->saved_data["extra_width"].toInt();
    const auto second = extra_width ? scattered(saved[0], saved[2].data_ptr<int64_t>(), extra_width,
                                                ctx->saved_data["extra_dtype"].toScalarType(), scale)
                                    : torch::Tensor();
    return {first, torch::Tensor(), second, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// RulesTerm's addition to the loss, from the head's logits.
torch::Tensor rules_loss(const PolicyNet::Gathered& g, const RulesTerm& rules) {
  if (!g.rules.defined() || !rules.targets.defined() || g.rules.sizes() != rules.targets.sizes())
    throw Error("training_loss: --rules-weight needs a resnet with the rules head and rule planes in the batch");
  const double rows = double(g.rules.size(0));
  return torch::binary_cross_entropy_with_logits(g.rules.to(torch::kFloat32), rules.targets, {}, {},
                                                 at::Reduction::Sum) *
         (rules.weight / (rows * double(encode::MOVE_INDICES)));
}

}  // namespace

torch::Tensor training_loss(PolicyNet& net, const torch::Tensor& planes, const torch::Tensor& targets,
                            Precision precision, const RulesTerm& rules, double margin) {
  const bool with_rules = rules.weight > 0;
  if (!planes.device().is_cpu() && !with_rules)
    return policy_loss(forward_trained_logits(net, planes, targets, precision), at::Reduction::Mean, margin);
  PolicyNet::Gathered g;
  {
    AutocastScope autocast(precision, planes.device());
    g = net.forward_gathered(in_net_layout(net, planes));
  }
  const auto& moves = net.trained_moves(planes.device());
  const torch::Tensor loss =
      planes.device().is_cpu()
          ? gathered_loss(g, targets, moves, margin)
          : policy_loss(with_targets(g.trained().to(torch::kFloat32), targets, moves), at::Reduction::Mean, margin);
  return with_rules ? loss + rules_loss(g, rules) : loss;
}

torch::Tensor gathered_loss(const PolicyNet::Gathered& g, const torch::Tensor& targets, const torch::Tensor& moves,
                            double margin) {
  if (g.scores.dim() != 2 || g.columns.dim() != 1 || moves.dim() != 1)
    throw Error("gathered_loss: expected logits [B,N] and column lists [K]");
  const int64_t rows = g.scores.size(0), fixed_off = encode::MOVE_INDICES - moves.numel();
  // Logits the node reads through raw pointers: fp32 or bf16 rows, contiguous, on the CPU.
  auto readable = [](const torch::Tensor& scores) {
    const auto type = scores.scalar_type();
    return scores.device().is_cpu() && (type == at::kFloat || type == at::kBFloat16) && scores.is_contiguous();
  };
  if (!readable(g.scores) || g.columns.size(0) != moves.numel())
    throw Error("gathered_loss: the net's trained logits are not fp32 or bf16 rows of " +
                std::to_string(moves.numel()) + " columns");
  // The columns are the model's own tables, checked on every call against the widths they index
  // (four reductions over 1,792 indices) before the node reads through them.
  auto within = [](const torch::Tensor& index, int64_t width) {
    return index.numel() == 0 || (index.min().item<int64_t>() >= 0 && index.max().item<int64_t>() < width);
  };
  if (!within(g.columns, g.scores.size(1)) || !within(moves, encode::MOVE_INDICES) || targets.dim() != 2 ||
      targets.size(0) != rows || targets.size(1) != encode::MOVE_INDICES)
    throw Error("gathered_loss: the logits' columns or the targets do not match the net's scores");
  if (g.extra.defined() && (g.extra.dim() != 2 || g.extra.size(0) != rows || !readable(g.extra) ||
                            !g.extra_columns.defined() || g.extra_columns.dim() != 1 ||
                            g.extra_columns.size(0) != moves.numel() || !within(g.extra_columns, g.extra.size(1))))
    throw Error("gathered_loss: the net's second logits do not match its first");
  const auto none = torch::empty({0}, torch::kLong);
  const auto sum = GatheredBce::apply(g.scores, g.columns.contiguous(), g.extra.defined() ? g.extra : none,
                                      g.extra.defined() ? g.extra_columns.contiguous() : none,
                                      targets.to(torch::kFloat32).contiguous(), moves.contiguous(), margin);
  return over_all_indices(sum, rows, fixed_off, at::Reduction::Mean);
}

}  // namespace legalnet::nn
