// The in-process scheduling cycle the replay drives for each pod, through the same
// plugins::Profile the server runs: kube-scheduler's resource fit (the Fit plugin), then the
// profile's PreFilter → Filter → Score → pick → GPU selection. The pick is the highest weighted
// total; equal totals go to the smallest node name (the published kube-scheduler fork's rule).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/model.h"
#include "plugins/cycle.h"
#include "plugins/framework.h"
#include "plugins/gpu/gpu_plugin.h"
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
  // The published evaluation: the GPU filter (replayGpuArgs, weight 0: it filters, never
  // scores) and `policy` with weight 1, which alone ranks the nodes.
  explicit Pipeline(std::unique_ptr<plugins::Plugin> policy);
  // A user's profile as `serve` runs it behind kube-scheduler; borrowed for the pipeline's life.
  explicit Pipeline(const plugins::Profile& profile);

  Decision decide(const codec::Pod& pod, const Cluster& cluster);

  const plugins::Profile& profile() const { return *profile_; }

 private:
  plugins::Profile fit_;                   // kube-scheduler's NodeResourcesFit: cpu, memory, pods
  std::optional<plugins::Profile> owned_;  // the published pipeline's profile
  const plugins::Profile* profile_;
  // Reused per pod, so the steady state allocates nothing per node.
  plugins::Cycle fitCycle_, cycle_;
};

// The GPU filter's args in the published pipeline: the simulator's GPU filter (spec §2.1),
// per-GPU milli accounting only. countWholeDevices is off because the simulator's
// kube-scheduler fork does not charge a shared pod a whole nvidia.com/gpu unit: twelve
// 250-milli pods fit on three GPUs. (With it on, a shared pod needs an untouched GPU, and every
// policy lands 3-9 points under the published allocation.) Everything else keeps its default:
// the trace's nodes carry no GPU memory or product label, so those checks never fire.
plugins::gpu::Args replayGpuArgs();

// PodInfo as the profile derives it (for registering pod classes ahead of the run).
plugins::PodInfo podInfoOf(const codec::Pod& pod);

}  // namespace fleetsched::replay
