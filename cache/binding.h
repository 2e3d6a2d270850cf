// What binding a pod to a node does to the cluster state, shared by every deployment that binds
// (the extender's bind verb, the in-process scheduler plugin's Reserve) so they decide alike:
//
//   reserveOnNode   re-check the node for the pod against the current snapshot (the pod's
//                   profile), pick its GPUs (Profile::selectGpus) and reserve them in the cache,
//                   so the next pod sees them at once;
//   bindingAnnotations  what the pod's Binding then carries, posted as given by both;
//   uncharge/charge what evicting a pod from, or adding one to, a copy of a node changes
//                   (preemption's what-if questions);
//   resourcesFit    cpu, memory and a pod slot, the part of fit kube-scheduler's own plugins
//                   check and fleetsched's profile does not.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cache/cache.h"
#include "codec/model.h"
#include "plugins/cycle.h"
#include "plugins/framework.h"
#include "plugins/profile.h"

namespace fleetsched::cache {

// Takes `c` off a copy of its node, as evicting the pod would.
void uncharge(const PodCharge& c, plugins::NodeInfo& n);
// Adds `pod` to a copy of a node as the cache would charge it bound there without a GPU index
// annotation: cpu, memory, one pod slot, its GPU count on its GPU resource, and per-GPU milli on
// the lowest-index GPUs with room.
void charge(const plugins::PodInfo& pod, plugins::NodeInfo& n);
// The pod's cpu, memory and one pod slot fit on `n`.
bool resourcesFit(const plugins::PodInfo& pod, const plugins::NodeInfo& n);

struct Placement {
  plugins::GpuAssignment gpus;  // count 0: the device plugin chooses (no per-GPU accounting)
  ReserveResult result = ReserveResult::Reserved;
};

// What reserveOnNode did: reserved (`placed` filled), or refused, and then nothing was charged.
struct Reservation {
  std::string refused;  // why not; empty when reserved
  Placement placed;
  bool ok() const { return refused.empty(); }
};

// Reserves `pod` on node `node`: begins `cycle` for the pod under `profile` against `snap`
// (which must hold every earlier reservation), re-checks the node, picks its GPUs and charges
// them through `w` (published before returning), the reservation living `ttl` unless the pod
// is seen bound.
Reservation reserveOnNode(plugins::Cycle& cycle, const plugins::Profile& profile, const codec::Pod& pod,
                          const Snapshot& snap, Cache::Writer& w, std::string_view node, Clock::duration ttl);

// The annotations the Binding of a pod placed as `placed` carries, in the order they are posted:
// none when the device plugin chooses the GPUs; else fleetsched.io/gpu-index and
// fleetsched.io/assume-time, wall-clock Unix nanoseconds (CLOCK_REALTIME), the clock a device
// plugin on the node can compare with its own (docs/annotations.md).
std::vector<std::pair<std::string, std::string>> bindingAnnotations(const Placement& placed);

}  // namespace fleetsched::cache
