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
  verdicts_.resize(all.size());
  fit_.runFilter(pod, fitState_, cluster, all, verdicts_, fitScratch_);
  const plugins::NodeBatch fits = fitScratch_.feasible(all, verdicts_);
  const std::span<plugins::Verdict> verdicts = std::span(verdicts_).first(fits.size());
  profile_->runFilter(pod, state_, cluster, fits, verdicts, scratch_);
  const plugins::NodeBatch feasible = scratch_.feasible(fits, verdicts);
  d.pod = state_.pod;
  if (feasible.empty()) return d;
  const auto totals = profile_->scoreTotals(state_, cluster, feasible, scratch_);
  size_t best = 0;
  for (size_t n = 1; n < feasible.size(); ++n) {
    if (totals[n] > totals[best] ||
        (totals[n] == totals[best] && cluster.nameRank(feasible[n]->id) < cluster.nameRank(feasible[best]->id))) {
      best = n;
    }
  }
  const plugins::NodeInfo& chosen = *feasible[best];
  if (!profile_->selectGpus(state_, chosen, d.gpus)) return d;
  if (d.pod.wantsGpu() && d.gpus.count == 0) return d;  // no per-GPU ledger: cannot happen in replay
  d.node = static_cast<int>(chosen.id);
  return d;
}

}  // namespace fleetsched::replay
