// The in-process scheduling cycle the replay drives for each pod, through the same
// plugins::Profile the server runs: derivePodInfo → PreFilter → Filter (Fit, GPU) → Score
// (the policy) → pick → GPU selection. The pick is the highest weighted total; equal totals go
// to the smallest node name (the published kube-scheduler fork's rule).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codec/model.h"
#include "plugins/framework.h"
#include "plugins/profile.h"
#include "replay/cluster.h"

namespace fleetsched::replay {

struct Decision {
  int node = -1;  // -1: no feasible node
  plugins::GpuAssignment gpus;
  plugins::PodInfo pod;
};

class Pipeline {
 public:
  // Fit and GPU filters (the GPU plugin's own score is left out: the policy alone ranks, as in
  // the published runs), then `policy` with weight 1.
  explicit Pipeline(std::unique_ptr<plugins::Plugin> policy);

  Decision decide(const codec::Pod& pod, const Cluster& cluster);

  const plugins::Profile& profile() const { return profile_; }

 private:
  plugins::Profile profile_;
  // Reused per pod, so the steady state allocates nothing per node.
  plugins::CycleState state_;
  plugins::ProfileScratch scratch_;
  std::vector<plugins::Status> verdicts_;
};

// PodInfo as the profile derives it (for registering pod classes ahead of the run).
plugins::PodInfo podInfoOf(const codec::Pod& pod);

}  // namespace fleetsched::replay
