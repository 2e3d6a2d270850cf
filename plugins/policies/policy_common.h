// Shared arithmetic of the GPU placement policies (plugins/policies/*): the node view the FGD
// paper's policies use (CPU left, idle milli-GPU per device) and the two GPU pickers every policy
// falls back to. All GPU amounts are integer milli-GPU (1000 = one whole GPU).
#pragma once

#include <cstdint>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

// Normalisers the published policies divide by (one 128-core, 8-GPU machine).
constexpr int64_t kMaxSpecCpu = 128000;
constexpr int64_t kMaxSpecGpu = 8000;

inline int64_t cpuLeft(const NodeInfo& n) { return n.allocMilliCpu - n.usedMilliCpu; }

inline int32_t idleGpuMilli(const NodeInfo& n) {
  int32_t sum = 0;
  for (int i = 0; i < n.gpuCount; ++i) sum += n.gpuFreeMilli(i);
  return sum;
}

inline int fullyFreeGpus(const NodeInfo& n) {
  int free = 0;
  for (int i = 0; i < n.gpuCount; ++i) free += n.gpuUsedMilli[i] == 0;
  return free;
}

// A pod that takes part of one GPU and can share the rest.
inline bool isSharedGpuPod(const PodInfo& p) { return p.gpuCount == 1 && p.gpuMilli < kMilliPerGpu; }

// Bit of PodInfo's shape in NodeInfo::gpuPodShapes; 0 for a CPU-only pod.
inline uint32_t gpuPodShapeBit(const PodInfo& p) {
  if (!p.wantsGpu()) return 0;
  if (isSharedGpuPod(p)) return 1u;
  return p.gpuCount < 32 ? 1u << p.gpuCount : 1u << 31;
}

// Whole-GPU pods: the lowest-index GPUs that can take `milli` each, scanning GPUs in ascending
// idle share (stable), which for milli = 1000 is the lowest-index fully free GPUs. Returns false
// when fewer than `count` GPUs fit.
bool pickPackedGpus(const NodeInfo& node, int32_t count, int32_t milli, GpuAssignment& out);

// Shared pods: the GPU with the smallest idle share that still fits (lowest index on ties);
// other pods as pickPackedGpus. This is gpushare's and the simulator's default ("best").
bool pickBestFitGpus(const NodeInfo& node, const PodInfo& pod, GpuAssignment& out);

}  // namespace fleetsched::plugins::policies
