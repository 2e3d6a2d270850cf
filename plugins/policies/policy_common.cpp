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

bool pickBestFitGpus(const NodeInfo& node, const PodInfo& pod, GpuAssignment& out) {
  if (!isSharedGpuPod(pod)) return pickPackedGpus(node, pod.gpuCount, pod.gpuMilli, out);
  int best = -1;
  for (int i = 0; i < node.gpuCount; ++i) {
    const int32_t free = node.gpuFreeMilli(i);
    if (free >= pod.gpuMilli && (best < 0 || free < node.gpuFreeMilli(best))) best = i;
  }
  if (best < 0) return false;
  out.count = 1;
  out.index[0] = static_cast<uint8_t>(best);
  out.milliEach = pod.gpuMilli;
  return true;
}

}  // namespace fleetsched::plugins::policies
