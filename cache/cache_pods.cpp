// CacheState's pod accounting: upsert and delete against the accounting rules in cache.h, file
// reload and relist sweep, the charges on nodes (GPU picking included), pods waiting for their
// node, and the workload zone counts.
#include "cache/cache_state.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "plugins/interpretation.h"

namespace fleetsched::cache {

void CacheState::upsertPod(const codec::Pod& pod) {
  const bool terminal = pod.phase == codec::PodPhase::Succeeded || pod.phase == codec::PodPhase::Failed;
  const bool holds = !terminal && !pod.nodeName.empty();
  auto it = findPod(pod.uid);
  if (it == pods_.end()) {
    if (!holds) return;
    it = pods_.emplace(PodKey(pod.uid), PodRecord{}).first;
    it->second.seen = podMark_;
    refill(it->second, pod);
    place(it->first, it->second, pod.nodeName, 0, false);
    return;
  }
  PodRecord& rec = it->second;
  rec.seen = podMark_;
  switch (rec.state) {
    case PodState::Reserved: {
      if (!terminal && pod.nodeName.empty()) return;  // the Binding is not visible yet
      const bool confirms = holds && lookup(pod.nodeName) == rec.node;
      const uint16_t reservedMask = rec.appliedMask;
      uncharge(rec);
      removeReservation(rec);
      ++(confirms ? confirmed_ : released_);
      if (!holds) break;
      refill(rec, pod);
      if (confirms && !rec.hasIndex) {
        // Without an index annotation the GPUs the binder reserved are the pod's GPUs.
        place(it->first, rec, pod.nodeName, reservedMask, true);
      } else {
        place(it->first, rec, pod.nodeName, 0, false);
      }
      return;
    }
    case PodState::Bound: {
      if (!holds) {
        uncharge(rec);
        --boundCount_;
        break;
      }
      PodRecord fresh;
      fillRequests(fresh, pod);
      const bool sameNode = nodeRef(rec.node).name == pod.nodeName;
      if (sameNode && sameRequests(rec, fresh)) return;  // a status update: nothing to charge
      // Same node, no index annotation, same share: keep the GPUs picked earlier.
      const bool keepGpus = sameNode && !fresh.hasIndex && !rec.hasIndex && fresh.gpuMilli == rec.gpuMilli;
      const uint16_t mask = rec.appliedMask;
      uncharge(rec);
      --boundCount_;
      refill(rec, pod);
      place(it->first, rec, pod.nodeName, keepGpus ? mask : 0, keepGpus);
      return;
    }
    case PodState::Waiting: {
      unwait(it->first);
      if (!holds) break;
      refill(rec, pod);
      place(it->first, rec, pod.nodeName, 0, false);
      return;
    }
  }
  // The pod holds nothing any more.
  releaseWorkloadKey(rec);
  pods_.erase(it);
}

bool CacheState::deletePod(std::string_view uid) {
  auto it = findPod(uid);
  if (it == pods_.end()) return false;
  PodRecord& rec = it->second;
  switch (rec.state) {
    case PodState::Reserved:
      uncharge(rec);
      removeReservation(rec);
      ++released_;
      break;
    case PodState::Bound:
      uncharge(rec);
      --boundCount_;
      break;
    case PodState::Waiting:
      unwait(it->first);
      break;
  }
  releaseWorkloadKey(rec);
  pods_.erase(it);
  return true;
}

void CacheState::replacePods(std::span<const codec::Pod> pods) {
  std::unordered_set<std::string_view> keep;
  keep.reserve(pods.size());
  for (const auto& p : pods) keep.insert(p.uid);
  std::vector<std::string> gone;
  for (const auto& [uid, rec] : pods_) {
    if (rec.state == PodState::Reserved) continue;
    std::string text = uid.str();
    if (!keep.contains(text)) gone.push_back(std::move(text));
  }
  for (const auto& uid : gone) deletePod(uid);
  for (const auto& p : pods) upsertPod(p);
}

size_t CacheState::sweepPods() {
  std::vector<std::string> gone;
  for (const auto& [uid, rec] : pods_) {
    if (rec.seen != podMark_ && rec.seen != kUnseen) gone.push_back(uid.str());
  }
  for (const auto& uid : gone) deletePod(uid);
  return gone.size();
}

bool CacheState::podCharge(std::string_view uid, PodCharge& out) const {
  auto it = findPod(uid);
  if (it == pods_.end()) return false;
  const PodRecord& rec = it->second;
  if (rec.state == PodState::Waiting || rec.node == kNoNode) return false;
  out = PodCharge{};
  out.node = rec.node;
  out.reserved = rec.state == PodState::Reserved;
  out.milliCpu = rec.milliCpu;
  out.memory = rec.memory;
  for (const auto& sc : rec.scalars) {
    if (sc.resource == 0 || out.scalarCount == out.scalars.size()) continue;
    out.scalars[out.scalarCount++] = {resourceName(sc.resource), sc.amount};
  }
  out.gpuMask = rec.appliedMask;
  out.gpuMilli = rec.gpuMilli;
  return true;
}

// --- pod charges -----------------------------------------------------------------------------

// Small ids for the GPU resources pods request, so a pod record stays compact.
uint16_t CacheState::resourceId(std::string_view name) {
  auto it = resourceIds_.find(name);
  if (it != resourceIds_.end()) return it->second;
  const std::string_view interned = builder_.internResource(name);
  resourceNames_.push_back(interned);
  const auto id = static_cast<uint16_t>(resourceNames_.size());  // 0 = none
  resourceIds_.emplace(interned, id);
  return id;
}

void CacheState::fillRequests(PodRecord& rec, const codec::Pod& pod) {
  rec.milliCpu = pod.requests.milliCpu;
  rec.memory = pod.requests.memory;
  rec.scalars = {};
  int n = 0;
  for (const auto& r : pod.requests.scalar) {
    if (r.value <= 0 || !builder_.interpretation().isGpuResource(r.name)) continue;
    if (n == kMaxPodScalars) break;
    rec.scalars[n++] = {resourceId(r.name), static_cast<int32_t>(std::min<int64_t>(r.value, INT32_MAX))};
  }
  // The share the pod is charged on each GPU: the annotation when valid, else a whole GPU.
  const int32_t milli = plugins::gpuMilliAnnotation(pod);
  rec.gpuMilli = static_cast<uint16_t>(milli > 0 ? milli : plugins::kMilliPerGpu);
  uint16_t mask = 0;
  rec.hasIndex = plugins::gpuIndexAnnotation(pod, mask);
  rec.indexMask = mask;
}

// Requests and workload key from `pod`; the record's earlier key reference is dropped.
void CacheState::refill(PodRecord& rec, const codec::Pod& pod) {
  fillRequests(rec, pod);
  releaseWorkloadKey(rec);
  if (builder_.interpretation().workloadKey(pod, keyScratch_)) {
    rec.workload = workloadKeys_.acquire(keyScratch_);
  }
}

bool CacheState::sameRequests(const PodRecord& a, const PodRecord& b) {
  if (a.milliCpu != b.milliCpu || a.memory != b.memory || a.gpuMilli != b.gpuMilli || a.hasIndex != b.hasIndex ||
      a.indexMask != b.indexMask) {
    return false;
  }
  for (int i = 0; i < kMaxPodScalars; ++i) {
    if (a.scalars[i].resource != b.scalars[i].resource || a.scalars[i].amount != b.scalars[i].amount) return false;
  }
  return true;
}

// Charges `rec` (requests filled) on its node, or parks it until the node appears.
void CacheState::place(const PodKey& uid, PodRecord& rec, std::string_view nodeName, uint16_t mask,
                       bool explicitMask) {
  const uint32_t id = lookup(nodeName);
  if (id == kNoNode) {
    rec.state = PodState::Waiting;
    rec.node = kNoNode;
    wait(uid.str(), nodeName);
    return;
  }
  rec.state = PodState::Bound;
  if (explicitMask) {
    charge(rec, id, mask, true);
  } else {
    charge(rec, id, rec.indexMask, rec.hasIndex);
  }
  ++boundCount_;
}

// Parks pod `uid` until node `nodeName` appears.
void CacheState::wait(std::string uid, std::string_view nodeName) {
  auto [it, _] = waiting_.try_emplace(std::string(nodeName));
  it->second.push_back(uid);
  waitingOn_.insert_or_assign(std::move(uid), std::string(nodeName));
  ++waitingCount_;
}

void CacheState::unwait(const PodKey& key) {
  const std::string uid = key.str();
  auto on = waitingOn_.find(uid);
  if (on != waitingOn_.end()) {
    auto w = waiting_.find(on->second);
    if (w != waiting_.end()) {
      auto& v = w->second;
      v.erase(std::remove(v.begin(), v.end(), uid), v.end());
      if (v.empty()) waiting_.erase(w);
    }
    waitingOn_.erase(on);
  }
  --waitingCount_;
}

// The GPUs a pod without an index annotation is charged on: the lowest-index GPUs with room
// for `milli`, then (an over-full node) the ones with most room left.
uint16_t CacheState::pickGpus(const NodeInfo& n, int count, int milli) {
  uint16_t mask = 0;
  int picked = 0;
  for (int g = 0; g < n.gpuCount && picked < count; ++g) {
    if (n.gpuFreeMilli(g) >= milli) {
      mask = static_cast<uint16_t>(mask | (1U << g));
      ++picked;
    }
  }
  while (picked < count && picked < n.gpuCount) {
    int best = -1;
    for (int g = 0; g < n.gpuCount; ++g) {
      if ((mask >> g) & 1U) continue;
      if (best < 0 || n.gpuFreeMilli(g) > n.gpuFreeMilli(best)) best = g;
    }
    mask = static_cast<uint16_t>(mask | (1U << best));
    ++picked;
  }
  return mask;
}

void CacheState::charge(PodRecord& rec, uint32_t id, uint16_t mask, bool explicitMask) {
  NodeInfo& n = mutableNode(id);
  n.usedMilliCpu += rec.milliCpu;
  n.usedMemory += rec.memory;
  n.usedPods += 1;
  int64_t primaryAmount = 0;
  const std::string_view primary = cold_[id]->primaryGpu;
  for (const auto& s : rec.scalars) {
    if (s.resource == 0) continue;
    const std::string_view name = resourceName(s.resource);
    if (name == primary) primaryAmount = s.amount;
    for (uint8_t i = 0; i < n.scalarCount; ++i) {
      if (n.scalars[i].name == name) n.scalars[i].used += s.amount;
    }
  }
  const uint16_t valid = static_cast<uint16_t>((1U << n.gpuCount) - 1);
  if (explicitMask) {
    mask &= valid;
  } else if (primaryAmount > 0 && n.gpuCount > 0) {
    mask = pickGpus(n, static_cast<int>(std::min<int64_t>(primaryAmount, n.gpuCount)), rec.gpuMilli);
  } else {
    mask = 0;
  }
  for (uint16_t m = mask; m != 0; m &= static_cast<uint16_t>(m - 1)) {
    const int g = std::countr_zero(m);
    const int used = n.gpuUsedMilli[g] + rec.gpuMilli;
    if (used > plugins::kMilliPerGpu) ++overcommits_;
    n.gpuUsedMilli[g] = static_cast<uint16_t>(std::min(used, plugins::kMilliPerGpu));
  }
  rec.node = id;
  rec.appliedMask = mask;
  rec.zone = n.zone;
  if (rec.workload != kNoWorkload) addWorkload(workloadKeys_.str(rec.workload), rec.zone, +1);
}

void CacheState::uncharge(PodRecord& rec) {
  if (rec.node == kNoNode) return;
  NodeInfo& n = mutableNode(rec.node);
  n.usedMilliCpu -= rec.milliCpu;
  n.usedMemory -= rec.memory;
  n.usedPods -= 1;
  for (const auto& s : rec.scalars) {
    if (s.resource == 0) continue;
    const std::string_view name = resourceName(s.resource);
    for (uint8_t i = 0; i < n.scalarCount; ++i) {
      if (n.scalars[i].name == name) n.scalars[i].used -= s.amount;
    }
  }
  for (uint16_t m = rec.appliedMask; m != 0; m &= static_cast<uint16_t>(m - 1)) {
    const int g = std::countr_zero(m);
    if (g < n.gpuCount) n.gpuUsedMilli[g] = static_cast<uint16_t>(std::max(0, n.gpuUsedMilli[g] - rec.gpuMilli));
  }
  if (rec.workload != kNoWorkload) addWorkload(workloadKeys_.str(rec.workload), rec.zone, -1);
  rec.node = kNoNode;
  rec.appliedMask = 0;
}

// Drops the record's reference to its workload key (its counts are already removed).
void CacheState::releaseWorkloadKey(PodRecord& rec) {
  if (rec.workload != kNoWorkload) workloadKeys_.release(rec.workload);
  rec.workload = kNoWorkload;
}

// --- workload zone counts --------------------------------------------------------------------

WorkloadShard& CacheState::mutableShard(uint32_t s, uint32_t needStride) {
  dirty_ = true;
  WorkloadShard* old = shards_[s];
  if (!shardDirty_[s] || old == nullptr || old->stride < needStride) {
    // Copy (or regrow) compactly: workloads whose counts all reached zero are dropped here.
    auto* fresh = new WorkloadShard;
    fresh->stride = std::max<uint32_t>(old != nullptr ? old->stride : 0, (needStride + 3) & ~3U);
    if (old != nullptr) {
      for (const auto& e : old->entries) {
        bool any = false;
        for (uint32_t z = 0; z < old->stride; ++z) any |= old->counts[e.countOffset + z] != 0;
        if (!any) continue;
        WorkloadShard::Entry ne{e.hash, static_cast<uint32_t>(fresh->keys.size()), e.keyLength,
                                static_cast<uint32_t>(fresh->counts.size())};
        fresh->keys.append(old->keys, e.keyOffset, e.keyLength);
        fresh->counts.resize(fresh->counts.size() + fresh->stride, 0);
        std::copy_n(old->counts.begin() + e.countOffset, old->stride, fresh->counts.begin() + ne.countOffset);
        fresh->entries.push_back(ne);
      }
      if (shardDirty_[s]) {
        delete old;  // a private copy no reader has seen
      } else {
        pendingRetire_.emplace_back(old, &deleteObject<WorkloadShard>);
      }
    }
    shards_[s] = fresh;
    if (!shardDirty_[s]) {
      shardDirty_[s] = 1;
      dirtyShards_.push_back(s);
    }
  }
  return *shards_[s];
}

void CacheState::addWorkload(std::string_view key, uint16_t zone, int delta) {
  const uint64_t h = hashName(key);
  const auto s = static_cast<uint32_t>(h >> 56);
  WorkloadShard& shard = mutableShard(s, std::max<uint32_t>(zone + 1U, zoneCount_));
  for (const auto& e : shard.entries) {
    if (e.hash == h && std::string_view(shard.keys).substr(e.keyOffset, e.keyLength) == key) {
      uint32_t& c = shard.counts[e.countOffset + zone];
      if (delta < 0) {
        assert(c > 0);
        if (c > 0) --c;
      } else {
        ++c;
      }
      return;
    }
  }
  if (delta < 0) return;
  WorkloadShard::Entry e{h, static_cast<uint32_t>(shard.keys.size()), static_cast<uint32_t>(key.size()),
                         static_cast<uint32_t>(shard.counts.size())};
  shard.keys.append(key);
  shard.counts.resize(shard.counts.size() + shard.stride, 0);
  shard.counts[e.countOffset + zone] = 1;
  shard.entries.push_back(e);
}

}  // namespace fleetsched::cache
