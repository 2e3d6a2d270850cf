#include "plugins/policies/fgd/fgd_policy.h"

#include <cmath>

#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/fgd/online_typical.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

namespace {

class FgdPolicy final : public Plugin {
 public:
  explicit FgdPolicy(const FgdArgs& args) : cache_(args.cache) {
    if (!cache_ && args.model) cache_ = std::make_shared<FragCache>(args.model);
    if (!cache_) online_ = std::make_unique<OnlineTypicalPods>(TypicalPods::kDefaultKeepPercent, kFgdClassMemory);
  }
  std::string_view name() const override { return kFgdName; }
  bool scores() const override { return true; }

  Status preFilter(CycleState& state, const ClusterState&, int) const override {
    if (online_) cache_ = online_->observe(state.pod);
    return {};
  }

  void score(const CycleState& state, int, const NodeBatch& nodes, std::span<int32_t> out) const override {
    if (!cache_) {
      for (auto& s : out) s = 0;
      return;
    }
    const uint32_t podClass = cache_->podClassOf(state.pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      out[i] = cache_->bestScore(cache_->stateOf(*nodes[i]), podClass);
    }
  }

  // The paper's ranking ends in its scheduler's smallest-name tie-break; kube-scheduler's own is
  // random, so the plugin makes the winner unique.
  void normalizeScore(const CycleState&, int, const NodeBatch& nodes, std::span<int32_t> scores) const override {
    keepFirstNameOnTop(nodes.nodes, scores);
  }

  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    const PodInfo& pod = state.pod;
    if (!cache_ || !isSharedGpuPod(pod)) return plugins::selectGpus(pod, node, out);
    return cache_->pickSharedGpu(node, pod, out);
  }

 private:
  // Memos of pure functions of (node state, pod class), and the online typical pods when no
  // model was given: logically const, single-threaded like the reactor that owns the profile.
  mutable std::shared_ptr<FragCache> cache_;
  mutable std::unique_ptr<OnlineTypicalPods> online_;
};

}  // namespace

std::unique_ptr<Plugin> createFgdPolicy(const FgdArgs& args) { return std::make_unique<FgdPolicy>(args); }

}  // namespace fleetsched::plugins::policies
