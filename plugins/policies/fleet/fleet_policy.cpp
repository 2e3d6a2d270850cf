#include "plugins/policies/fleet/fleet_policy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "plugins/policies/fgd/fgd_policy.h"
#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

namespace {

// Δ values closer than this are equal: F is a sum of popularity-weighted milli-GPU amounts, so
// real differences are far larger, while summation order can leave noise in the last bits.
constexpr double kDeltaEpsilon = 1e-6;

struct Rank {
  double delta;       // the primary key (Δ, or FGD's integer score)
  int64_t secondary;  // smaller wins; equal ranks fall to the name order
};

bool better(const Rank& a, const Rank& b) {
  if (std::abs(a.delta - b.delta) > kDeltaEpsilon) return a.delta > b.delta;
  return a.secondary < b.secondary;
}
bool same(const Rank& a, const Rank& b) { return std::abs(a.delta - b.delta) <= kDeltaEpsilon && a.secondary == b.secondary; }

struct Scratch final : PluginState {
  std::vector<Rank> ranks;
};

class FleetPolicy final : public Plugin {
 public:
  explicit FleetPolicy(const FleetArgs& args)
      : exact_(args.exactDelta), mode_(args.mode), tieCpu_(args.tieBreakCpuPods), tieGpu_(args.tieBreakGpuPods) {
    if (!args.model) return;
    if (args.gpuWeight <= 0) {
      cache_ = args.cache ? args.cache : std::make_shared<FragCache>(args.model);
      return;
    }
    auto classes = args.model->classes();
    double total = 0;
    for (auto& c : classes) {
      c.popularity = static_cast<double>(c.count) *
                     (1 + args.gpuWeight * c.pod.gpuCount * c.pod.gpuMilli / double{kMilliPerGpu});
      total += c.popularity;
    }
    for (auto& c : classes) c.popularity /= total;
    cache_ = std::make_shared<FragCache>(std::make_shared<FragModel>(std::move(classes)));
  }
  std::string_view name() const override { return "Fleet"; }
  bool scores() const override { return true; }

  void preScore(CycleState& state, const ClusterState&, int index, NodeSpan) const override {
    state.setSlot(index, std::make_unique<Scratch>());
  }

  void score(const CycleState& state, int index, NodeSpan nodes, std::span<int32_t> out) const override {
    auto* scratch = static_cast<Scratch*>(state.slot(index));
    if (scratch != nullptr) scratch->ranks.resize(nodes.size());
    const PodInfo& pod = state.pod;
    const uint32_t podClass = cache_ ? cache_->podClassOf(pod) : 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& n = *nodes[i];
      const double delta = cache_ ? cache_->bestDelta(cache_->stateOf(n), podClass) : 0;
      out[i] = fgdScoreOfDelta(delta);
      if (scratch != nullptr) {
        int64_t secondary = 0;
        const int tieBreak_ = pod.wantsGpu() ? tieGpu_ : tieCpu_;
        if (tieBreak_ == 1) secondary = idleGpuMilli(n) - pod.gpuTotalMilli();
        if (tieBreak_ == 2) secondary = -(idleGpuMilli(n) - pod.gpuTotalMilli());
        if (tieBreak_ == 3) secondary = cpuLeft(n) - pod.milliCpu;
        if (tieBreak_ == 4) secondary = -static_cast<int64_t>(delta * 1000);
        double primary = static_cast<double>(out[i]);
        if (mode_ == 1) primary = delta;
        if (mode_ == 2) primary = fgdScoreOfDelta(delta * 8 / std::max<int>(1, n.gpuCount));
        if (mode_ == 3) primary = fgdScoreOfDelta(delta * 2);
        if (mode_ == 4) primary = fgdScoreOfDelta(delta / 2);
        if (mode_ == 5) primary = fgdScoreOfDelta(isSharedGpuPod(pod) ? delta : delta / 2);
        if (mode_ == 6) primary = fgdScoreOfDelta(isSharedGpuPod(pod) ? delta : delta / 4);
        if (tieBreak_ == 7) {
          secondary = static_cast<int64_t>(idleGpuMilli(n) - cache_->fragmentationOf(cache_->stateOf(n)));
        }
        if (tieBreak_ == 5) secondary = n.gpuCount;
        if (tieBreak_ == 6) secondary = -n.gpuCount;
        scratch->ranks[i] = {primary, secondary};
      }
    }
  }

  // The best node alone scores 100; the others keep their order below it.
  void normalizeScore(const CycleState& state, int index, std::span<int32_t> scores) const override {
    const auto* scratch = static_cast<const Scratch*>(state.slot(index));
    if (scratch == nullptr || scratch->ranks.size() != scores.size() || scores.empty()) return;
    const auto& r = scratch->ranks;
    size_t best = 0;
    double lo = r[0].delta;
    for (size_t i = 1; i < r.size(); ++i) {
      if (better(r[i], r[best])) best = i;
      lo = std::min(lo, r[i].delta);
    }
    const double hi = r[best].delta;
    for (size_t i = 0; i < r.size(); ++i) {
      if (same(r[i], r[best])) {
        scores[i] = kMaxNodeScore;
      } else if (hi - lo <= kDeltaEpsilon || r[i].delta == FragCache::kNoFit) {
        scores[i] = 0;
      } else {
        scores[i] = static_cast<int32_t>((kMaxNodeScore - 1) * std::clamp((r[i].delta - lo) / (hi - lo), 0.0, 1.0));
      }
    }
  }

  bool selectGpus(const CycleState& state, int, const NodeInfo& node, GpuAssignment& out) const override {
    const PodInfo& pod = state.pod;
    if (!cache_ || !isSharedGpuPod(pod)) return pickBestFitGpus(node, pod, out);
    int best = -1;
    double bestDelta = FragCache::kNoFit;
    for (int i = 0; i < node.gpuCount; ++i) {
      const int32_t free = node.gpuFreeMilli(i);
      if (free < pod.gpuMilli) continue;
      const double d = cache_->deltaOn(node, pod, i);
      if (best < 0 || d > bestDelta + kDeltaEpsilon ||
          (std::abs(d - bestDelta) <= kDeltaEpsilon && free < node.gpuFreeMilli(best))) {
        best = i;
        bestDelta = d;
      }
    }
    if (best < 0) return false;
    out.count = 1;
    out.index[0] = static_cast<uint8_t>(best);
    out.milliEach = pod.gpuMilli;
    return true;
  }

 private:
  bool exact_;
  int mode_;
  int tieCpu_, tieGpu_;
  // A memo of a pure function of (node state, pod class): logically const.
  std::shared_ptr<FragCache> cache_;
};

}  // namespace

std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args) { return std::make_unique<FleetPolicy>(args); }

}  // namespace fleetsched::plugins::policies
