#include "plugins/policies/packing/gpu_packing_policy.h"

#include <algorithm>

#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

int32_t gpuPackingScore(const NodeInfo& node, const PodInfo& pod) {
  if (!pod.wantsGpu()) return 0;
  const int freeGpus = fullyFreeGpus(node);
  if (freeGpus == node.gpuCount) return std::max(kMaxNodeScore / 3 - freeGpus, freeGpus);
  GpuAssignment pick;
  if (!pickPackedGpus(node, pod.gpuCount, pod.gpuMilli, pick)) return 0;
  int freeUsed = 0;
  int32_t freePercent = 0;
  for (int i = 0; i < pick.count; ++i) {
    const int32_t free = node.gpuFreeMilli(pick.index[i]);
    freeUsed += free == kMilliPerGpu;
    freePercent += free * 100 / kMilliPerGpu;
  }
  if (freeUsed > 0) return std::max(kMaxNodeScore / 2 - freeUsed, kMaxNodeScore / 3);
  return std::max(kMaxNodeScore - freePercent / 10, kMaxNodeScore / 2);
}

namespace {

class GpuPackingPolicy final : public Plugin {
 public:
  std::string_view name() const override { return "GpuPacking"; }
  bool scores() const override { return true; }
  void score(const CycleState& state, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = gpuPackingScore(*nodes[i], state.pod);
  }
  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    return plugins::selectGpus(state.pod, node, out);
  }
};

}  // namespace

std::unique_ptr<Plugin> createGpuPackingPolicy() { return std::make_unique<GpuPackingPolicy>(); }

}  // namespace fleetsched::plugins::policies
