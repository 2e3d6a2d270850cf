#include "cache/epoch.h"

#include <algorithm>

namespace fleetsched::cache {

EpochDomain::~EpochDomain() {
  for (auto& r : retired_) r.deleter(r.context, r.object);
}

int EpochDomain::registerReader() {
  for (int i = 0; i < kMaxReaders; ++i) {
    bool expected = false;
    if (slots_[i].used.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      slots_[i].active.store(kIdle, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void EpochDomain::unregisterReader(int slot) {
  slots_[slot].active.store(kIdle, std::memory_order_release);
  slots_[slot].used.store(false, std::memory_order_release);
}

void EpochDomain::retire(void* object, Deleter deleter, void* context) {
  retired_.push_back({object, deleter, context, epoch_.load(std::memory_order_relaxed)});
}

void EpochDomain::advance() {
  // Only the writer stores the epoch; a reader that loads the new value also sees the new root,
  // because the root was stored first.
  epoch_.store(epoch_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
  reclaim();
}

size_t EpochDomain::reclaim() {
  if (retired_.empty()) return 0;
  uint64_t oldest = kIdle;
  for (const auto& s : slots_) oldest = std::min(oldest, s.active.load(std::memory_order_seq_cst));
  // A reader that announced epoch e may hold anything that was still published during e, i.e.
  // anything retired at epoch >= e. Objects retired before every announced epoch are unreachable.
  size_t kept = 0;
  size_t freed = 0;
  for (size_t i = 0; i < retired_.size(); ++i) {
    Retired r = retired_[i];
    if (r.epoch < oldest) {
      r.deleter(r.context, r.object);
      ++freed;
    } else {
      retired_[kept++] = r;
    }
  }
  retired_.resize(kept);
  return freed;
}

}  // namespace fleetsched::cache
