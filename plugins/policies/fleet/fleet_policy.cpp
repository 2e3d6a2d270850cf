#include "plugins/policies/fleet/fleet_policy.h"

#include <algorithm>
#include <vector>

#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/fgd/online_typical.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

namespace {

struct Rank {
  int32_t score;      // larger wins
  int64_t secondary;  // then smaller wins; equal ranks fall to the node-name order
  bool operator==(const Rank&) const = default;
};

bool better(const Rank& a, const Rank& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.secondary < b.secondary;
}

struct Scratch final : PluginState {
  std::vector<Rank> ranks;
};

class FleetPolicy final : public Plugin {
 public:
  explicit FleetPolicy(const FleetArgs& args) : cache_(args.cache) {
    if (!cache_ && args.model) cache_ = std::make_shared<FragCache>(args.model, FragCache::ScoreScale{1000, kFleetCoarseScale});
    if (!cache_) online_ = std::make_unique<OnlineTypicalPods>(kFleetKeepPercent, FragCache::ScoreScale{1000, kFleetCoarseScale});
  }
  std::string_view name() const override { return kFleetName; }
  bool scores() const override { return true; }

  Status preFilter(CycleState& state, const ClusterState&, int) const override {
    if (online_) cache_ = online_->observe(state.pod);
    return {};
  }

  // The scratch survives CycleState::reset, so a reused CycleState stops allocating here.
  void preScore(CycleState& state, const ClusterState&, int index, NodeSpan) const override {
    if (dynamic_cast<Scratch*>(state.slot(index)) == nullptr) state.setSlot(index, std::make_unique<Scratch>());
  }

  void score(const CycleState& state, int index, NodeSpan nodes, std::span<int32_t> out) const override {
    if (!cache_) {
      std::fill(out.begin(), out.end(), 0);
      return;
    }
    auto* scratch = static_cast<Scratch*>(state.slot(index));
    if (scratch != nullptr) scratch->ranks.resize(nodes.size());
    const PodInfo& pod = state.pod;
    const uint32_t podClass = cache_->podClassOf(pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      const uint32_t st = cache_->stateOf(n);
      out[i] = cache_->bestScore(st, podClass);
      if (scratch != nullptr) {
        const int64_t secondary = pod.wantsGpu() ? 0 : idleGpuMilli(n);
        scratch->ranks[i] = {out[i], secondary};
      }
    }
  }

  // Every node tied with the best rank scores 100; the others keep their score below it.
  void normalizeScore(const CycleState& state, int index, NodeSpan, std::span<int32_t> scores) const override {
    const auto* scratch = static_cast<const Scratch*>(state.slot(index));
    if (scratch == nullptr || scratch->ranks.size() != scores.size() || scores.empty()) return;
    const auto& r = scratch->ranks;
    size_t best = 0;
    for (size_t i = 1; i < r.size(); ++i) {
      if (better(r[i], r[best])) best = i;
    }
    for (size_t i = 0; i < r.size(); ++i) {
      scores[i] = r[i] == r[best] ? kMaxNodeScore : std::min(scores[i], kMaxNodeScore - 1);
    }
  }

  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    const PodInfo& pod = state.pod;
    if (!cache_ || !isSharedGpuPod(pod)) return pickBestFitGpus(node, pod, out);
    return cache_->pickSharedGpu(node, pod, /*tightestOnTie=*/true, out);
  }

 private:
  // Memos of pure functions of (node state, pod class), and the online typical pods when no
  // model was given: logically const, single-threaded like the reactor that owns the profile.
  mutable std::shared_ptr<FragCache> cache_;
  mutable std::unique_ptr<OnlineTypicalPods> online_;
};

}  // namespace

std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args) { return std::make_unique<FleetPolicy>(args); }

}  // namespace fleetsched::plugins::policies
