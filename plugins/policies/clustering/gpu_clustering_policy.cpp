#include "plugins/policies/clustering/gpu_clustering_policy.h"

#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

int32_t gpuClusteringScore(const NodeInfo& node, const PodInfo& pod) {
  const uint32_t bit = gpuPodShapeBit(pod);
  if (bit == 0) return 0;
  const int32_t fullness = static_cast<int32_t>((kMaxNodeScore / 4) * (kMaxSpecGpu - idleGpuMilli(node)) / kMaxSpecGpu);
  const uint32_t shapes = node.gpuPodShapes;
  if (shapes & bit) return fullness + (shapes == bit ? 75 : 50);
  return fullness + (shapes == 0 ? 25 : 0);
}

namespace {

class GpuClusteringPolicy final : public Plugin {
 public:
  std::string_view name() const override { return "GpuClustering"; }
  bool scores() const override { return true; }
  void score(const CycleState& state, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = gpuClusteringScore(*nodes[i], state.pod);
  }
  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    return plugins::selectGpus(state.pod, node, out);
  }
};

}  // namespace

std::unique_ptr<Plugin> createGpuClusteringPolicy() { return std::make_unique<GpuClusteringPolicy>(); }

}  // namespace fleetsched::plugins::policies
