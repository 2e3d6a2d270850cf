#include "plugins/policies/fleet/fleet_policy.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "plugins/policies/fgd/frag_source.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

namespace {

double fleetTolerance(const PodInfo& pod) {
  if (isSharedGpuPod(pod)) return kFleetSharedGpuTolerance;
  return pod.gpuCount == 1 ? kFleetWholeGpuTolerance : kFleetMultiGpuTolerance;
}

// A shared pod's GPU by the rule that chose the node: every GPU within the shared tolerance of
// the best Δ ties, and the lowest index wins.
bool pickSharedGpu(FragCache& cache, const NodeInfo& node, const PodInfo& pod, GpuAssignment& out) {
  std::array<double, kMaxGpusPerNode> delta{};
  double best = FragCache::kNoFit;
  for (int i = 0; i < node.gpuCount; ++i) {
    delta[i] = node.gpuFreeMilli(i) < pod.gpuMilli ? FragCache::kNoFit : cache.deltaOn(node, pod, i);
    best = std::max(best, delta[i]);
  }
  if (best == FragCache::kNoFit) return false;
  int gpu = 0;
  while (delta[gpu] < best - kFleetSharedGpuTolerance) ++gpu;
  out.count = 1;
  out.index[0] = static_cast<uint8_t>(gpu);
  out.milliEach = pod.gpuMilli;
  return true;
}

class FleetPolicy final : public Plugin {
 public:
  explicit FleetPolicy(const FleetArgs& args) : frag_(args.model, args.cache, kFleetClassMemory) {}
  std::string_view name() const override { return kFleetName; }
  bool scores() const override { return true; }

  // The slot survives CycleState::reset, so a reused CycleState stops allocating here.
  Status preFilter(CycleState& state, const ClusterState&, int index) const override {
    frag_.begin(state, index);
    return {};
  }

  // FGD's score for every pod (what another plugin's weights add to); normalizeScore then
  // re-ranks as the header says.
  void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const override {
    FragSlot& s = FragSource::slot(state, index);
    FragCache* cache = s.cache.get();
    if (cache == nullptr) {
      std::fill(out.begin(), out.end(), 0);
      return;
    }
    const PodInfo& pod = state.pod;
    const uint32_t podClass = cache->podClassOf(pod);
    s.delta.resize(nodes.size());
    s.idleGpu.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      const uint32_t st = cache->stateOf(*nodes[i]);
      out[i] = cache->bestScore(st, podClass);
      if (pod.wantsGpu()) {
        s.delta[i] = cache->bestDelta(st, podClass);
      } else {
        s.idleGpu[i] = idleGpuMilli(*nodes[i]);
      }
    }
  }

  // The winner keeps 100, every other node at most 99.
  void normalizeScore(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> scores) const override {
    const FragSlot& s = FragSource::slot(state, index);
    if (!s.cache || scores.empty()) return;
    const PodInfo& pod = state.pod;
    size_t win = 0;
    if (pod.wantsGpu()) {
      const double best = *std::max_element(s.delta.begin(), s.delta.end());
      const double floor = best - fleetTolerance(pod);
      win = scores.size();
      for (size_t i = 0; i < scores.size(); ++i) {
        if (s.delta[i] >= floor && (win == scores.size() || nodes[i]->name < nodes[win]->name)) win = i;
      }
    } else {
      for (size_t i = 1; i < scores.size(); ++i) {
        if (scores[i] != scores[win] ? scores[i] > scores[win]
            : s.idleGpu[i] != s.idleGpu[win] ? s.idleGpu[i] < s.idleGpu[win]
                                             : nodes[i]->name < nodes[win]->name) {
          win = i;
        }
      }
    }
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = i == win ? kMaxNodeScore : std::min(scores[i], kMaxNodeScore - 1);
  }

  bool selectGpus(const CycleState& state, int index, const NodeInfo& node, GpuAssignment& out) const override {
    const PodInfo& pod = state.pod;
    FragCache* cache = FragSource::slot(state, index).cache.get();
    if (cache == nullptr || !isSharedGpuPod(pod)) return plugins::selectGpus(pod, node, out);
    return pickSharedGpu(*cache, node, pod, out);
  }

 private:
  const FragSource frag_;
};

}  // namespace

std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args) { return std::make_unique<FleetPolicy>(args); }

}  // namespace fleetsched::plugins::policies
