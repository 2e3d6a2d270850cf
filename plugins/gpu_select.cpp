#include "plugins/gpu_select.h"

#include <algorithm>

namespace fleetsched::plugins {

bool selectGpus(const PodInfo& pod, const NodeInfo& node, GpuAssignment& out, GpuChoice choice) {
  out = GpuAssignment{};
  if (!pod.wantsGpu()) return true;
  const int gpus = std::min<int>(node.gpuCount, kMaxGpusPerNode);
  if (pod.gpuCount == 1 && pod.gpuMilli < kMilliPerGpu) {
    int best = -1;
    int32_t bestFree = 0;
    for (int i = 0; i < gpus; ++i) {
      const int32_t free = node.gpuFreeMilli(i);
      if (free < pod.gpuMilli) continue;
      // Strict comparisons keep the lowest index on ties.
      const bool better = best < 0 || (choice == GpuChoice::BestFit ? free < bestFree : free > bestFree);
      if (better) {
        best = i;
        bestFree = free;
      }
    }
    if (best < 0) return false;
    out.count = 1;
    out.index[0] = static_cast<uint8_t>(best);
    out.milliEach = pod.gpuMilli;
    return true;
  }
  if (pod.gpuCount > gpus) return false;
  int taken = 0;
  for (int i = 0; i < gpus && taken < pod.gpuCount; ++i) {
    if (node.gpuUsedMilli[i] == 0) out.index[taken++] = static_cast<uint8_t>(i);
  }
  if (taken < pod.gpuCount) {
    out = GpuAssignment{};
    return false;
  }
  out.count = static_cast<uint8_t>(taken);
  out.milliEach = kMilliPerGpu;
  return true;
}

}  // namespace fleetsched::plugins
