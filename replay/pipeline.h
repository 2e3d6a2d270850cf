// The in-process scheduling cycle the replay drives for each pod: PreFilter → Filter → PreScore →
// Score → NormalizeScore → pick → GPU selection, over plugins::Plugin objects as the server runs
// them. The pick is the highest weighted score; equal scores go to the smallest node name (the
// published kube-scheduler fork's rule).
//
// Interim: until the plugins branch's Profile, derivePodInfo and GPU/Fit filters land, this file
// carries minimal equivalents (resource fit for CPU/memory/pods; GPU count, per-GPU share and
// fleetsched.io/gpu-models constraint). They read the same codec::Pod fields and annotations.
#pragma once

#include <memory>
#include <vector>

#include "codec/model.h"
#include "plugins/framework.h"
#include "replay/cluster.h"

namespace fleetsched::replay {

// CPU, memory and GPU demand of a pod: cpu/memory requests, nvidia.com/gpu count, and the
// per-GPU share from fleetsched.io/gpu-milli (whole GPUs when absent).
plugins::PodInfo derivePodInfo(const codec::Pod& pod);

std::unique_ptr<plugins::Plugin> createResourceFitFilter();
std::unique_ptr<plugins::Plugin> createGpuFitFilter();

struct Decision {
  int node = -1;  // -1: no feasible node
  plugins::GpuAssignment gpus;
  plugins::PodInfo pod;
};

class Pipeline {
 public:
  // Filters run in order; the scorers' weighted sum ranks. GPU selection asks the scorers in
  // order, then falls back to best fit.
  Pipeline(std::vector<std::unique_ptr<plugins::Plugin>> filters,
           std::vector<std::pair<std::unique_ptr<plugins::Plugin>, int32_t>> scorers);

  Decision decide(const codec::Pod& pod, const Cluster& cluster);

 private:
  std::vector<std::unique_ptr<plugins::Plugin>> filters_;
  std::vector<std::pair<std::unique_ptr<plugins::Plugin>, int32_t>> scorers_;
  // Reused per pod, so the steady state allocates nothing per node.
  std::vector<plugins::Status> verdicts_;
  std::vector<const plugins::NodeInfo*> feasible_;
  std::vector<int32_t> scratch_;
  std::vector<int64_t> total_;
};

}  // namespace fleetsched::replay
