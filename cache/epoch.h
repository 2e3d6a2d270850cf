// Epoch-based reclamation for the cache's copy-on-write snapshots.
//
// Readers: each reading thread owns one slot. enter() announces the epoch it starts reading in
// (one load, one store with a full fence); leave() announces it is idle (one release store).
// Readers never block and never write shared lines other than their own slot.
//
// Writer (one thread at a time, the cache serialises it): retire() queues an object that the
// newest snapshot no longer references; advance() bumps the epoch after a publish and frees every
// queued object retired before the oldest epoch still announced by a reader.
//
// Why not liburcu: the reactor blocks in epoll between loop turns, so QSBR flavours would need
// online/offline calls around every poll; the memb flavour costs the same fence as this scheme
// plus an extra dependency. A reader slot per thread is all the cache needs (kMaxReaders).
#pragma once

#include <atomic>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fleetsched::cache {

class EpochDomain {
 public:
  static constexpr int kMaxReaders = 64;
  static constexpr uint64_t kIdle = UINT64_MAX;

  using Deleter = void (*)(void* context, void* object);

  EpochDomain() = default;
  EpochDomain(const EpochDomain&) = delete;
  EpochDomain& operator=(const EpochDomain&) = delete;
  // Frees everything still queued. No reader may be inside the domain.
  ~EpochDomain();

  // Claims a free reader slot; -1 when all kMaxReaders are taken. Any thread.
  int registerReader();
  void unregisterReader(int slot);

  // Reader side, on the thread that owns `slot`.
  void enter(int slot) {
    const uint64_t e = epoch_.load(std::memory_order_acquire);
    // seq_cst: the announcement must be globally visible before the reader loads the snapshot
    // pointer, or the writer could miss it and free what the reader is about to use.
    slots_[slot].active.store(e, std::memory_order_seq_cst);
  }
  void leave(int slot) { slots_[slot].active.store(kIdle, std::memory_order_release); }

  // Writer side.
  void retire(void* object, Deleter deleter, void* context);
  // Call after publishing a new root pointer (with a seq_cst store): queued objects become
  // reclaimable once every reader has moved past the current epoch.
  void advance();
  // Frees what no reader can hold any more; returns how many objects were freed.
  size_t reclaim();
  size_t pending() const { return retired_.size(); }
  uint64_t epoch() const { return epoch_.load(std::memory_order_relaxed); }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> active{kIdle};
    std::atomic<bool> used{false};
  };
  struct Retired {
    void* object;
    Deleter deleter;
    void* context;
    uint64_t epoch;
  };

  alignas(64) std::atomic<uint64_t> epoch_{1};
  std::array<Slot, kMaxReaders> slots_{};
  std::vector<Retired> retired_;  // writer only
};

}  // namespace fleetsched::cache
