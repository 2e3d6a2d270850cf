// CacheState's reservations: what the binder charges before kube-apiserver confirms a Binding,
// released by unreserve or when their TTL ends.
#include "cache/cache_state.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace fleetsched::cache {

ReserveResult CacheState::reserve(const ReservationRequest& r, Clock::time_point now) {
  const uint32_t id = lookup(r.node);
  if (id == kNoNode) return ReserveResult::UnknownNode;
  auto it = findPod(r.podUid);
  ReserveResult result = ReserveResult::Reserved;
  if (it != pods_.end()) {
    PodRecord& old = it->second;
    if (old.state != PodState::Reserved) return ReserveResult::AlreadyBound;
    uncharge(old);
    removeReservation(old);
    releaseWorkloadKey(old);
    ++released_;
    result = ReserveResult::Replaced;
    const uint32_t seen = old.seen;
    old = PodRecord{};
    old.seen = seen;
  } else {
    it = pods_.emplace(PodKey(r.podUid), PodRecord{}).first;
  }
  PodRecord& rec = it->second;
  rec.milliCpu = r.milliCpu;
  rec.memory = r.memory;
  if (!r.gpuResource.empty() && r.gpuAmount > 0) {
    rec.scalars[0] = {resourceId(r.gpuResource), static_cast<int32_t>(std::min<int64_t>(r.gpuAmount, INT32_MAX))};
  }
  uint16_t mask = 0;
  for (uint8_t i = 0; i < r.gpus.count && i < plugins::kMaxGpusPerNode; ++i) {
    if (r.gpus.index[i] < plugins::kMaxGpusPerNode) mask = static_cast<uint16_t>(mask | (1U << r.gpus.index[i]));
  }
  rec.gpuMilli = static_cast<uint16_t>(
      r.gpus.milliEach > 0 ? std::min<int32_t>(r.gpus.milliEach, plugins::kMilliPerGpu) : plugins::kMilliPerGpu);
  if (!r.workload.empty()) rec.workload = workloadKeys_.acquire(r.workload);
  rec.state = PodState::Reserved;
  charge(rec, id, mask, /*explicitMask=*/true);
  rec.reservationSlot = static_cast<uint32_t>(reservations_.size());
  reservations_.push_back({&*it, (now + r.ttl).time_since_epoch().count()});
  return result;
}

bool CacheState::unreserve(std::string_view uid) {
  auto it = findPod(uid);
  if (it == pods_.end() || it->second.state != PodState::Reserved) return false;
  uncharge(it->second);
  removeReservation(it->second);
  releaseWorkloadKey(it->second);
  ++released_;
  pods_.erase(it);
  return true;
}

size_t CacheState::expire(Clock::time_point now) {
  const int64_t t = now.time_since_epoch().count();
  size_t n = 0;
  for (size_t i = 0; i < reservations_.size();) {
    if (reservations_[i].expiresAt > t) {
      ++i;
      continue;
    }
    auto* entry = reservations_[i].pod;
    uncharge(entry->second);
    removeReservation(entry->second);  // moves the last entry into slot i
    releaseWorkloadKey(entry->second);
    // Erase by iterator: erasing by a key that lives inside the erased element is fragile.
    pods_.erase(pods_.find(entry->first));
    ++expired_;
    ++n;
  }
  return n;
}

void CacheState::removeReservation(PodRecord& rec) {
  const uint32_t slot = rec.reservationSlot;
  reservations_[slot] = reservations_.back();
  reservations_[slot].pod->second.reservationSlot = slot;
  reservations_.pop_back();
}

}  // namespace fleetsched::cache
