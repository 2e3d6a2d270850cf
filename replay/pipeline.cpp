#include "replay/pipeline.h"

#include "plugins/fit/fit_plugin.h"
#include "plugins/gpu/gpu_plugin.h"
#include "plugins/interpretation.h"

namespace fleetsched::replay {

namespace {

// Runs a plugin's PreFilter and Filter and hides the rest, so the GPU plugin's feasibility
// rules (count, share, fleetsched.io/gpu-models) apply without its binpack score.
class FilterOnly final : public plugins::Plugin {
 public:
  explicit FilterOnly(std::unique_ptr<plugins::Plugin> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  bool filters() const override { return inner_->filters(); }
  plugins::Status preFilter(plugins::CycleState& state, const plugins::ClusterState& cluster,
                            int index) const override {
    return inner_->preFilter(state, cluster, index);
  }
  void filter(const plugins::CycleState& state, int index, plugins::NodeSpan nodes,
              std::span<plugins::Status> out) const override {
    inner_->filter(state, index, nodes, out);
  }

 private:
  std::unique_ptr<plugins::Plugin> inner_;
};

std::vector<plugins::Profile::Entry> entries(std::unique_ptr<plugins::Plugin> policy) {
  std::vector<plugins::Profile::Entry> e;
  e.push_back({plugins::fit::create({}), 1});
  e.push_back({std::make_unique<FilterOnly>(plugins::gpu::create({})), 1});
  e.push_back({std::move(policy), 1});
  return e;
}

}  // namespace

plugins::PodInfo podInfoOf(const codec::Pod& pod) {
  plugins::PodInfo info;
  (void)plugins::derivePodInfo(pod, plugins::GpuResourceConfig{}, info);
  return info;
}

Pipeline::Pipeline(std::unique_ptr<plugins::Plugin> policy)
    : profile_("replay", plugins::GpuResourceConfig{}, entries(std::move(policy))) {}

Decision Pipeline::decide(const codec::Pod& pod, const Cluster& cluster) {
  Decision d;
  const plugins::NodeSpan all = cluster.nodes();
  verdicts_.resize(all.size());
  const plugins::NodeSpan feasible = profile_.runFilter(pod, state_, cluster, all, verdicts_, scratch_);
  d.pod = state_.pod;
  if (feasible.empty()) return d;
  const auto totals = profile_.scoreTotals(state_, cluster, feasible, scratch_);
  size_t best = 0;
  for (size_t n = 1; n < feasible.size(); ++n) {
    if (totals[n] > totals[best] ||
        (totals[n] == totals[best] && cluster.nameRank(feasible[n]->id) < cluster.nameRank(feasible[best]->id))) {
      best = n;
    }
  }
  const plugins::NodeInfo& chosen = *feasible[best];
  if (!profile_.selectGpus(state_, chosen, d.gpus)) return d;
  if (d.pod.wantsGpu() && d.gpus.count == 0) return d;  // no per-GPU ledger: cannot happen in replay
  d.node = static_cast<int>(chosen.id);
  return d;
}

}  // namespace fleetsched::replay
