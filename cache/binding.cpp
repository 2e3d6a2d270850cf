#include "cache/binding.h"

#include <algorithm>
#include <ctime>

#include "plugins/annotations.h"
#include "plugins/interpretation.h"

namespace fleetsched::cache {

void uncharge(const PodCharge& c, plugins::NodeInfo& n) {
  n.usedMilliCpu -= c.milliCpu;
  n.usedMemory -= c.memory;
  n.usedPods -= 1;
  for (uint8_t i = 0; i < c.scalarCount; ++i) {
    for (uint8_t k = 0; k < n.scalarCount; ++k) {
      if (n.scalars[k].name == c.scalars[i].name) n.scalars[k].used -= c.scalars[i].amount;
    }
  }
  for (int g = 0; g < n.gpuCount; ++g) {
    if ((c.gpuMask >> g) & 1U) n.gpuUsedMilli[g] = static_cast<uint16_t>(std::max(0, n.gpuUsedMilli[g] - c.gpuMilli));
  }
}

void charge(const plugins::PodInfo& pod, plugins::NodeInfo& n) {
  n.usedMilliCpu += pod.milliCpu;
  n.usedMemory += pod.memory;
  n.usedPods += 1;
  if (!pod.wantsGpu()) return;
  for (uint8_t k = 0; k < n.scalarCount; ++k) {
    if (n.scalars[k].name == pod.gpuResource) n.scalars[k].used += pod.gpuCount;
  }
  int32_t left = pod.gpuCount;
  for (int g = 0; g < n.gpuCount && left > 0; ++g) {
    if (n.gpuFreeMilli(g) >= pod.gpuMilli) {
      n.gpuUsedMilli[g] = static_cast<uint16_t>(n.gpuUsedMilli[g] + pod.gpuMilli);
      --left;
    }
  }
}

bool resourcesFit(const plugins::PodInfo& pod, const plugins::NodeInfo& n) {
  return n.allocMilliCpu - n.usedMilliCpu >= pod.milliCpu && n.allocMemory - n.usedMemory >= pod.memory &&
         (n.allocPods == 0 || n.usedPods < n.allocPods);
}

Reservation reserveOnNode(plugins::Cycle& cycle, const plugins::Profile& profile, const codec::Pod& pod,
                          const Snapshot& snap, Cache::Writer& w, std::string_view node, Clock::duration ttl) {
  auto who = [&] { return std::string(pod.namespace_) + "/" + std::string(pod.name); };
  Reservation out;
  const plugins::NodeInfo* info = snap.find(node);
  if (info == nullptr) {
    out.refused = "node " + std::string(node) + " not found in fleetsched's cache";
    return out;
  }

  // The node was feasible when filtered; re-check against what was reserved since.
  cycle.begin(profile, pod, snap);
  if (const plugins::Status st = cycle.filterOne(*info); !st.ok()) {
    out.refused = "node " + std::string(node) + " no longer fits pod " + who() + ": " + std::string(st.reason);
    return out;
  }
  if (!cycle.selectGpus(*info, out.placed.gpus)) {
    out.refused = "no GPUs left for pod " + who() + " on node " + std::string(node);
    return out;
  }

  const plugins::PodInfo& p = cycle.pod();
  std::string workload;
  ReservationRequest r;
  r.podUid = pod.uid;
  r.node = node;
  r.milliCpu = p.milliCpu;
  r.memory = p.memory;
  r.gpuResource = p.gpuResource;
  r.gpuAmount = p.gpuCount;
  r.gpus = out.placed.gpus;
  // Counted under the key the watch will count the bound pod under, so confirming it keeps the count.
  if (w.interpretation().workloadKey(pod, workload)) r.workload = workload;
  r.ttl = ttl;
  out.placed.result = w.reserve(r, Clock::now());
  w.publish();
  if (out.placed.result == ReserveResult::UnknownNode) {
    out.refused = "node " + std::string(node) + " vanished from fleetsched's cache";
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> bindingAnnotations(const Placement& placed) {
  std::vector<std::pair<std::string, std::string>> out;
  if (placed.gpus.count == 0) return out;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t unixNanos = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  out.emplace_back(plugins::annotations::kGpuIndex, plugins::formatGpuIndex(placed.gpus));
  out.emplace_back(plugins::annotations::kAssumeTime, std::to_string(unixNanos));
  return out;
}

}  // namespace fleetsched::cache
