#include "plugins/policies/random/random_policy.h"

#include <functional>
#include <string_view>

#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

uint64_t mixBits(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

namespace {

constexpr std::string_view kName = "Random";

struct Chosen final : PluginState {
  uint32_t nodeId = 0;
};

class RandomPolicy final : public Plugin {
 public:
  explicit RandomPolicy(const RandomArgs& args) : seed_(args.seed) {}
  std::string_view name() const override { return kName; }
  bool scores() const override { return true; }

  void preScore(CycleState& state, const ClusterState&, int index, const NodeBatch& nodes) const override {
    // The slot survives CycleState::reset; reuse it when it is ours.
    auto* chosen = dynamic_cast<Chosen*>(state.slot(index));
    if (chosen == nullptr) {
      state.setSlot(index, std::make_unique<Chosen>());
      chosen = static_cast<Chosen*>(state.slot(index));
    }
    chosen->nodeId = nodes.empty() ? UINT32_MAX : nodes[draw(state, 1) % nodes.size()]->id;
  }

  void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const override {
    const auto* chosen = static_cast<const Chosen*>(state.slot(index));
    for (size_t i = 0; i < nodes.size(); ++i) {
      out[i] = chosen != nullptr && nodes[i]->id == chosen->nodeId ? kMaxNodeScore : 0;
    }
  }

  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    const PodInfo& pod = state.pod;
    if (!isSharedGpuPod(pod)) return pickPackedGpus(node, pod.gpuCount, pod.gpuMilli, out);
    int fits = 0;
    for (int i = 0; i < node.gpuCount; ++i) fits += node.gpuFreeMilli(i) >= pod.gpuMilli;
    if (fits == 0) return false;
    int pick = static_cast<int>(draw(state, 2) % static_cast<uint64_t>(fits));
    for (int i = 0; i < node.gpuCount; ++i) {
      if (node.gpuFreeMilli(i) >= pod.gpuMilli && pick-- == 0) {
        out.count = 1;
        out.index[0] = static_cast<uint8_t>(i);
        out.milliEach = pod.gpuMilli;
        return true;
      }
    }
    return false;
  }

 private:
  uint64_t draw(const CycleState& state, uint64_t salt) const {
    const std::string_view podName = state.pod.pod != nullptr ? state.pod.pod->name : std::string_view{};
    return mixBits(seed_ ^ mixBits(std::hash<std::string_view>{}(podName) + salt));
  }

  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Plugin> createRandomPolicy(const RandomArgs& args) { return std::make_unique<RandomPolicy>(args); }

}  // namespace fleetsched::plugins::policies
