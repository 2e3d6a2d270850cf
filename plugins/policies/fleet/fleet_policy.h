// fleetsched's own GPU policy: FGD's fragmentation measure (frag_model.h, the same typical pods
// as FGD) with a different ranking, each part kept because it measured better than FGD on the
// public openb traces and on variants of every trace family built from them
// (bench/replay/README.md):
//   1. A GPU pod ranks nodes by Δ itself, not by FGD's floor(100·σ(Δ/1000)), and every node
//      within a tolerance of the best Δ ties: 80 milli-GPU for whole-GPU pods, 5 for shared
//      pods. Among tied nodes the smallest name wins: first-fit in a fixed node order among the
//      nodes that fragment about equally, which packs. (Exact Δ, tolerance 0, loses to FGD by
//      0.3-0.5 points on most traces; FGD's sigmoid bins are ~40 milli wide near Δ = 0 but
//      fixed, so two nodes 1 milli apart can fall in different bins.)
//   2. A CPU-only pod ranks by FGD's score and breaks ties towards the node with the least idle
//      GPU, then the smallest name: CPU is taken where the GPUs are used up rather than where it
//      would strand idle GPUs.
//   3. The winner is the only node with the top score (keepFirstNameOnTop's reason: kube-scheduler
//      breaks ties at random), so the extender path places as the replay does.
// GPU choice inside the node is FGD's.
#pragma once

#include <memory>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

class FragCache;

// Δ tolerances (milli-GPU) under which nodes tie for a whole-GPU and a shared pod.
constexpr double kFleetWholeGpuTolerance = 80;
constexpr double kFleetSharedGpuTolerance = 5;

struct FleetArgs {
  // As FgdArgs: the typical-pod model (fragModelFor), else learned online.
  std::shared_ptr<const FragModel> model;
  // As FgdArgs::cache.
  std::shared_ptr<FragCache> cache;
};

std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args);

constexpr std::string_view kFleetName = "Fleet";

}  // namespace fleetsched::plugins::policies
