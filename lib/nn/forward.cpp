#include "nn/forward.h"

#include "nn/models.h"

namespace legalnet::nn {

void choose_memory_format(PolicyNet& net) {
  for (const auto& p : net.parameters())
    if (p.dim() == 4) {
      net.use_channels_last();
      return;
    }
}

torch::Tensor in_net_layout(const PolicyNet& net, const torch::Tensor& planes) {
  return net.channels_last() ? planes.contiguous(torch::MemoryFormat::ChannelsLast) : planes;
}

torch::Tensor forward_logits_of(PolicyNet& net, const torch::Tensor& planes, Precision precision,
                                torch::Tensor (PolicyNet::*forward)(torch::Tensor)) {
  torch::Tensor logits;
  {
    AutocastScope autocast(precision, planes.device());
    logits = (net.*forward)(in_net_layout(net, planes));
  }
  return logits.to(torch::kFloat32);
}

torch::Tensor forward_logits(PolicyNet& net, const torch::Tensor& planes, Precision precision) {
  return forward_logits_of(net, planes, precision, &PolicyNet::forward);
}

}  // namespace legalnet::nn
