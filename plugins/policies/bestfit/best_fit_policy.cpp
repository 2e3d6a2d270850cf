#include "plugins/policies/bestfit/best_fit_policy.h"

#include <algorithm>

#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

int32_t bestFitRawScore(const NodeInfo& node, const PodInfo& pod) {
  double s = 0;
  s += static_cast<double>(cpuLeft(node) - pod.milliCpu) / kMaxSpecCpu * 0.5;
  s += static_cast<double>(idleGpuMilli(node) - pod.gpuTotalMilli()) / kMaxSpecGpu * 0.5;
  return static_cast<int32_t>((1.0 - s) * kMaxNodeScore);
}

void minMaxNormalize(std::span<int32_t> scores) {
  if (scores.empty()) return;
  const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
  const int64_t low = *lo, range = *hi - *lo;
  for (auto& s : scores) s = range == 0 ? 0 : static_cast<int32_t>((s - low) * kMaxNodeScore / range);
}

namespace {

class BestFitPolicy final : public Plugin {
 public:
  std::string_view name() const override { return "BestFit"; }
  bool scores() const override { return true; }
  void score(const CycleState& state, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = bestFitRawScore(*nodes[i], state.pod);
  }
  void normalizeScore(const CycleState&, int, const NodeBatch&, std::span<int32_t> scores) const override {
    minMaxNormalize(scores);
  }
  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    return plugins::selectGpus(state.pod, node, out);
  }
};

}  // namespace

std::unique_ptr<Plugin> createBestFitPolicy() { return std::make_unique<BestFitPolicy>(); }

}  // namespace fleetsched::plugins::policies
