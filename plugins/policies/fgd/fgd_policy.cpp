#include "plugins/policies/fgd/fgd_policy.h"

#include <cmath>

#include "plugins/policies/fgd/frag_source.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

namespace {

class FgdPolicy final : public Plugin {
 public:
  explicit FgdPolicy(const FgdArgs& args) : frag_(args.model, args.cache, kFgdClassMemory) {}
  std::string_view name() const override { return kFgdName; }
  bool scores() const override { return true; }

  Status preFilter(CycleState& state, const ClusterState&, int index) const override {
    frag_.begin(state, index);
    return {};
  }

  void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const override {
    FragCache* cache = FragSource::slot(state, index).cache.get();
    if (cache == nullptr) {
      for (auto& s : out) s = 0;
      return;
    }
    const uint32_t podClass = cache->podClassOf(state.pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      out[i] = cache->bestScore(cache->stateOf(*nodes[i]), podClass);
    }
  }

  // The paper's ranking ends in its scheduler's smallest-name tie-break; kube-scheduler's own is
  // random, so the plugin makes the winner unique.
  void normalizeScore(const CycleState&, int, const NodeBatch& nodes, std::span<int32_t> scores) const override {
    keepFirstNameOnTop(nodes.nodes, scores);
  }

  bool selectGpus(const CycleState& state, int index, const NodeInfo& node, GpuAssignment& out) const override {
    const PodInfo& pod = state.pod;
    FragCache* cache = FragSource::slot(state, index).cache.get();
    if (cache == nullptr || !isSharedGpuPod(pod)) return plugins::selectGpus(pod, node, out);
    return cache->pickSharedGpu(node, pod, out);
  }

 private:
  const FragSource frag_;
};

}  // namespace

std::unique_ptr<Plugin> createFgdPolicy(const FgdArgs& args) { return std::make_unique<FgdPolicy>(args); }

}  // namespace fleetsched::plugins::policies
