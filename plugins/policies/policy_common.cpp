#include "plugins/policies/policy_common.h"

#include <algorithm>
#include <array>

namespace fleetsched::plugins::policies {

bool pickPackedGpus(const NodeInfo& node, int32_t count, int32_t milli, GpuAssignment& out) {
  std::array<uint8_t, kMaxGpusPerNode> order{};
  for (int i = 0; i < node.gpuCount; ++i) order[i] = static_cast<uint8_t>(i);
  std::stable_sort(order.begin(), order.begin() + node.gpuCount,
                   [&](uint8_t a, uint8_t b) { return node.gpuFreeMilli(a) < node.gpuFreeMilli(b); });
  out.count = 0;
  out.milliEach = milli;
  for (int i = 0; i < node.gpuCount && out.count < count; ++i) {
    if (node.gpuFreeMilli(order[i]) >= milli) out.index[out.count++] = order[i];
  }
  if (out.count < count) return false;
  std::sort(out.index.begin(), out.index.begin() + out.count);
  return true;
}

void keepFirstNameOnTop(NodeSpan nodes, std::span<int32_t> scores) {
  if (scores.empty()) return;
  size_t best = 0;
  for (size_t i = 1; i < scores.size(); ++i) {
    if (scores[i] > scores[best] || (scores[i] == scores[best] && nodes[i]->name < nodes[best]->name)) best = i;
  }
  const int32_t top = scores[best];
  if (top == 0) {  // no room below: lift the first instead
    scores[best] = 1;
    return;
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (i != best && scores[i] == top) scores[i] = top - 1;
  }
}

}  // namespace fleetsched::plugins::policies
