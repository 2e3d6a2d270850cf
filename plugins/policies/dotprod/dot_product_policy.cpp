#include "plugins/policies/dotprod/dot_product_policy.h"

#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

int32_t dotProductScore(const NodeInfo& node, const PodInfo& pod) {
  const int64_t cpu = cpuLeft(node);
  if (cpu < pod.milliCpu) return 0;
  const double u0 = static_cast<double>(cpu) / kMaxSpecCpu;
  const double u1 = static_cast<double>(idleGpuMilli(node)) / kMaxSpecGpu;
  const double v0 = static_cast<double>(pod.milliCpu) / kMaxSpecCpu;
  const double v1 = static_cast<double>(pod.gpuTotalMilli()) / kMaxSpecGpu;
  const double d = (u0 * v0 + u1 * v1) / 2;
  return static_cast<int32_t>(kMaxNodeScore * (1 - d));
}

namespace {

class DotProductPolicy final : public Plugin {
 public:
  std::string_view name() const override { return "DotProduct"; }
  bool scores() const override { return true; }
  void score(const CycleState& state, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = dotProductScore(*nodes[i], state.pod);
  }
  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    return plugins::selectGpus(state.pod, node, out);
  }
};

}  // namespace

std::unique_ptr<Plugin> createDotProductPolicy() { return std::make_unique<DotProductPolicy>(); }

}  // namespace fleetsched::plugins::policies
