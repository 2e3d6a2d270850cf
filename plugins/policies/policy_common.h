// Shared arithmetic of the GPU placement policies (plugins/policies/*): the node view the FGD
// paper's policies use (CPU left, idle milli-GPU per device) and the two GPU pickers every policy
// falls back to. All GPU amounts are integer milli-GPU (1000 = one whole GPU).
#pragma once

#include <cstdint>

#include "plugins/framework.h"
#include "plugins/gpu_select.h"  // the GPU choice every policy falls back to: selectGpus, best fit
#include "plugins/node_columns.h"

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

// Among the nodes sharing the highest score, only the one with the smallest name keeps it; the
// others drop one point (at a top of 0 the first is lifted to 1). The published simulator's scheduler breaks ties that way, which makes
// a packing policy first-fit in a fixed node order; kube-scheduler breaks them at random, which
// spreads pods over every tied node. A policy whose ranking relies on the fixed order carries it
// itself, so that kube-scheduler, seeing one best node, places as the replay does (Fleet in a
// live replay of the default trace: 86.3 % GPU allocation with random ties, 95.4 % replayed).
void keepFirstNameOnTop(NodeSpan nodes, std::span<int32_t> scores);

// Whole-GPU pods: the lowest-index GPUs that can take `milli` each, scanning GPUs in ascending
// idle share (stable), which for milli = 1000 is the lowest-index fully free GPUs. Returns false
// when fewer than `count` GPUs fit.
bool pickPackedGpus(const NodeInfo& node, int32_t count, int32_t milli, GpuAssignment& out);

}  // namespace fleetsched::plugins::policies
