// fleetsched's own GPU policy: FGD's fragmentation measure (frag_model.h, the same typical pods
// as FGD) counting memory too, with a different ranking, each part kept because it measured
// better than FGD on the public openb traces and on variants of every trace family built from
// them (bench/replay/README.md):
//   0. A typical pod must fit the node's memory as well as its CPU (typical_pods.h splits FGD's
//      classes by memory without moving FGD's cut): a node out of memory strands its idle GPUs
//      as one out of CPU does, and the Fit filter rejects it for memory as for CPU. Over the 40
//      traces where Fleet was weakest it raised the sum of Fleet − FGD from +4.41 to +6.63
//      points at 100 % and the worst trace from −0.07 to −0.01. (Re-cutting on the memory
//      classes instead lost 0.4 on cpu250: the cut, not memory, moved.)
//   1. A GPU pod ranks nodes by Δ itself, not by FGD's floor(100·σ(Δ/1000)), and every node
//      within a tolerance of the best Δ ties: 10 milli-GPU for shared pods, 80 for one-GPU pods,
//      0 for pods of several GPUs. Among tied nodes the smallest name wins: first-fit in a fixed
//      node order among the nodes that fragment about equally, which packs. (Exact Δ for every
//      pod loses to FGD by 0.3-0.5 points on most traces; FGD's sigmoid bins are ~40 milli wide
//      near Δ = 0 but fixed, so two nodes 1 milli apart can fall in different bins. Shared 5 lost
//      0.20 to FGD on gpushare80 variants, 15-40 lose on gpushare40; one-GPU 40 loses 0.1-0.2 on
//      default and gpushare40; several-GPU 80 lost 0.04-0.08 on multigpu40/50 variants and
//      fell 0.02 below published FGD on gpushare40, 0 holds both.)
//   2. A CPU-only pod ranks by FGD's score and breaks ties towards the node with the least idle
//      GPU, then the smallest name: CPU is taken where the GPUs are used up rather than where it
//      would strand idle GPUs.
//   3. The winner is the only node with the top score (keepFirstNameOnTop's reason: kube-scheduler
//      breaks ties at random), so the extender path places as the replay does.
// Inside the node, a shared pod's GPU is chosen by rule 1 as well (the GPUs within 10 milli of
// the best Δ tie, the lowest index wins), where FGD takes the first GPU of the best
// floor(100·σ(Δ/1000)); pods of whole GPUs take the lowest-index free GPUs, as in FGD. Over the
// 40 traces the same rule for the GPU raised the sum of Fleet − FGD from +6.63 / +6.22 to
// +6.96 / +6.58 and the worst trace from −0.01 to 0.00 (exact Δ, tolerance 0: +6.77 / +6.36,
// default −0.08).
#pragma once

#include <memory>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

class FragCache;

// Δ tolerances (milli-GPU) under which nodes tie for a shared pod, a one-GPU pod and a
// several-GPU pod.
constexpr double kFleetSharedGpuTolerance = 10;
constexpr double kFleetWholeGpuTolerance = 80;
constexpr double kFleetMultiGpuTolerance = 0;

struct FleetArgs {
  // As FgdArgs: the typical-pod model (fragModelFor), else learned online.
  std::shared_ptr<const FragModel> model;
  // As FgdArgs::cache.
  std::shared_ptr<FragCache> cache;
};

std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args);

constexpr std::string_view kFleetName = "Fleet";
// Fleet's typical pods carry memory (rule 0 above).
constexpr ClassMemory kFleetClassMemory = ClassMemory::kCounted;

}  // namespace fleetsched::plugins::policies
