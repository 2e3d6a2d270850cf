#include "replay/pipeline.h"

#include "plugins/fit/fit_plugin.h"
#include "plugins/interpretation.h"

namespace fleetsched::replay {

namespace {

plugins::Profile fitProfile() {
  std::vector<plugins::Profile::Entry> e;
  e.push_back({plugins::fit::create({}), 0});
  return plugins::Profile("resource-fit", plugins::GpuResourceConfig{}, std::move(e));
}

plugins::Profile publishedProfile(std::unique_ptr<plugins::Plugin> policy) {
  std::vector<plugins::Profile::Entry> e;
  e.push_back({plugins::gpu::create(replayGpuArgs()), 0});
  e.push_back({std::move(policy), 1});
  return plugins::Profile("replay", plugins::GpuResourceConfig{}, std::move(e));
}

}  // namespace

plugins::gpu::Args replayGpuArgs() {
  plugins::gpu::Args a;
  a.countWholeDevices = false;
  return a;
}

plugins::PodInfo podInfoOf(const codec::Pod& pod) {
  plugins::PodInfo info;
  (void)plugins::derivePodInfo(pod, plugins::GpuResourceConfig{}, info);
  return info;
}

Pipeline::Pipeline(std::unique_ptr<plugins::Plugin> policy)
    : fit_(fitProfile()), owned_(publishedProfile(std::move(policy))), profile_(&*owned_) {}

Pipeline::Pipeline(const plugins::Profile& profile) : fit_(fitProfile()), profile_(&profile) {}

Decision Pipeline::decide(const codec::Pod& pod, const Cluster& cluster) {
  Decision d;
  const plugins::NodeBatch all = cluster.batch();
  fitCycle_.begin(fit_, pod, cluster);
  fitCycle_.filter(all);
  const plugins::NodeBatch fits = fitCycle_.feasible(all);
  cycle_.begin(*profile_, pod, cluster);
  cycle_.filter(fits);
  const plugins::NodeBatch feasible = cycle_.feasible(fits);
  d.pod = cycle_.pod();
  if (feasible.empty()) return d;
  const auto totals = cycle_.scoreTotals(feasible);
  size_t best = 0;
  for (size_t n = 1; n < feasible.size(); ++n) {
    if (totals[n] > totals[best] ||
        (totals[n] == totals[best] && cluster.nameRank(feasible[n]->id) < cluster.nameRank(feasible[best]->id))) {
      best = n;
    }
  }
  const plugins::NodeInfo& chosen = *feasible[best];
  if (!cycle_.selectGpus(chosen, d.gpus)) return d;
  if (d.pod.wantsGpu() && d.gpus.count == 0) return d;  // no per-GPU ledger: cannot happen in replay
  d.node = static_cast<int>(chosen.id);
  return d;
}

}  // namespace fleetsched::replay
