// The cluster state fleetsched schedules against: nodes, what bound pods use on them, and the
// binder's in-flight reservations. One writer, any number of lock-free readers.
//
// Readers (the reactor thread, later one per reactor): create one Reader per thread, then take
// a Snapshot per batch. acquire() is an epoch announcement plus one acquire load; it never
// blocks and never allocates. A Snapshot pins its version until destroyed; keep it for one batch,
// not across loop turns (a pinned version delays reclamation of everything retired after it).
//
// Writers: Cache::write() returns a Writer that holds the writer lock (a mutex only writers
// take: ingestion on its own thread and the binder's reserve() on the reactor serialise there,
// readers never touch it). A Writer applies any number of events to private copies of the
// chunks they touch and publishes them all at once: on publish() or when it goes out of scope.
// Keep batches bounded (hundreds of events). The one-event helpers on Cache (upsertPod,
// reserve, ...) are a Writer each and wait for the lock; a thread that must never wait (the
// reactor, while ingestion runs at idle priority and may be preempted holding the lock) takes
// tryWrite() and comes back later when it is empty.
//
// What counts as a GPU, which labels mean what and how pods are keyed come from the
// plugins::Interpretation the cache is built with: serve passes its Config::interpretation(), so
// the cache reads nodes and pods exactly as the profiles' plugins do. Cache() reads them the way
// a default-constructed Interpretation says (no profile: tests, benchmarks).
//
// Accounting rules (upsertPod / deletePod):
//   - a pod holds resources when spec.nodeName is set and its phase is not Succeeded/Failed;
//     terminating pods (deletionTimestamp set) hold them until their deletion;
//   - it is charged requests.cpu/memory, one pod slot, every resource it requests that the
//     interpretation counts as a GPU (node scalars), and per-GPU milli on its node's per-GPU
//     resource (the interpretation's primary one): the GPUs listed
//     in annotation fleetsched.io/gpu-index ("0-1-3"), each by fleetsched.io/gpu-milli (1000
//     when absent or invalid); without the index annotation, the lowest-index GPUs with room
//     (deterministic, so totals stay right);
//   - a pod bound to a node the cache does not know yet waits and is charged when the node
//     appears; deleting a node sends its pods back to waiting;
//   - a pod moving between nodes or changing requests is uncharged and charged again; DELETED
//     for an unknown pod is a no-op.
// Workload zone counts (Snapshot::workloadZoneCounts) count Bound and Reserved pods per zone
// under Interpretation::workloadKey(pod), e.g. "ml/Job/train" or "ml/label/serving": the key the
// Zone plugin of the pod's profile asks about (same function, same labels).
// Reservations (reserve): charged at once; the upsertPod that shows the pod bound to the
// reserved node confirms them (no double charge: the reservation becomes the pod's charge,
// its GPUs kept when the pod carries no index annotation); unreserve, deletion, the pod
// turning up terminal or on another node, or TTL expiry (expire(now), driven by the owner's
// timer) release them.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>

#include "cache/epoch.h"
#include "cache/node_builder.h"
#include "cache/snapshot.h"
#include "codec/model.h"
#include "plugins/framework.h"
#include "plugins/interpretation.h"

namespace fleetsched::cache {

class Cache;
class CacheState;

using Clock = std::chrono::steady_clock;

// One reading thread's registration. Not thread-safe itself: use it from one thread only.
class Reader {
 public:
  explicit Reader(Cache& cache);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // The current version. Nested acquires on one Reader are allowed.
  Snapshot acquire();

 private:
  friend class Snapshot;
  void release();

  Cache* cache_;
  int slot_;
  int depth_ = 0;
};

struct ReservationRequest {
  std::string_view podUid;
  std::string_view node;
  int64_t milliCpu = 0;
  int64_t memory = 0;
  std::string_view gpuResource;  // node scalar charged with gpuAmount; empty: none
  int64_t gpuAmount = 0;
  plugins::GpuAssignment gpus;   // per-GPU milli charged (count 0: none)
  std::string_view workload;     // counted in workloadZoneCounts; empty: none
  Clock::duration ttl = std::chrono::seconds(30);
};

enum class ReserveResult : uint8_t {
  Reserved,      // a new reservation
  Replaced,      // the pod's earlier reservation was released and this one charged
  UnknownNode,   // nothing charged
  AlreadyBound,  // the cache already charges the pod as bound; nothing charged
};

struct CacheStats {
  uint64_t version = 0;
  uint64_t nodes = 0;
  uint64_t boundPods = 0;    // pods charged on a node (reservations excluded)
  uint64_t waitingPods = 0;  // bound to a node the cache does not know
  uint64_t reservationsLive = 0;
  uint64_t reservationsConfirmed = 0;
  uint64_t reservationsExpired = 0;
  uint64_t reservationsReleased = 0;  // unreserve, deletion, superseded
  uint64_t gpuOvercommits = 0;        // per-GPU charges clipped at 1000 milli (accounting drift)
  uint64_t retiredPending = 0;        // old versions waiting for readers to move on
};

// What a pod the cache charges holds on its node, for preemption: copied out under the writer
// lock. Resource names are interned (valid for the cache's life).
struct PodCharge {
  uint32_t node = kNoNode;  // node id, as in snapshots
  bool reserved = false;    // a binder reservation not yet confirmed by the watch
  int64_t milliCpu = 0;
  int64_t memory = 0;
  struct Scalar {
    std::string_view name;
    int64_t amount = 0;
  };
  std::array<Scalar, 4> scalars{};
  uint8_t scalarCount = 0;
  uint16_t gpuMask = 0;   // GPUs charged on the node (bit i = GPU i)
  uint16_t gpuMilli = 0;  // share charged on each of them
};

class Cache {
 public:
  explicit Cache(plugins::Interpretation interpretation = {});
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  class Writer {
   public:
    Writer(Writer&& other) noexcept;
    Writer& operator=(Writer&&) = delete;
    ~Writer();  // publishes

    void upsertNode(const codec::Node& node);
    bool deleteNode(std::string_view name);
    void upsertPod(const codec::Pod& pod);
    bool deletePod(std::string_view uid);
    // The node set becomes exactly `nodes` (file reload): others are deleted, the rest upserted.
    void replaceNodes(std::span<const codec::Node> nodes);
    // The bound-pod set becomes exactly `pods`: charged pods absent from it are deleted.
    // Reservations of pods absent from it stay.
    void replacePods(std::span<const codec::Pod> pods);

    ReserveResult reserve(const ReservationRequest& request, Clock::time_point now);
    bool unreserve(std::string_view podUid);
    // Cache::podCharge for a thread that already holds the lock.
    bool podCharge(std::string_view uid, PodCharge& out) const;
    // Releases reservations whose TTL ended at or before `now`; returns how many.
    size_t expire(Clock::time_point now);

    // Mirroring a watch without a second key table: begin*Relist() starts a new mark, every
    // upsert of that kind marks what it applies (between relists too: an object a watch event
    // adds belongs to the last relist's truth), sweep*() deletes the nodes / pods the current
    // mark has not seen and returns how many. Pods that hold nothing have no record to sweep; a
    // reservation whose pod no upsert has shown yet stays (the pod may be newer than the list)
    // until its TTL.
    void beginNodeRelist();
    size_t sweepNodes();
    void beginPodRelist();
    size_t sweepPods();

    // Makes everything applied so far visible to readers.
    void publish();

    // The cache's (Cache::interpretation).
    const plugins::Interpretation& interpretation() const;

   private:
    friend class Cache;
    Writer(Cache& cache, std::try_to_lock_t);
    explicit Writer(Cache& cache);
    Cache* cache_;
    std::unique_lock<std::mutex> lock_;
  };

  Writer write() { return Writer(*this); }
  // The lock if it is free now, otherwise nothing (never waits).
  std::optional<Writer> tryWrite();

  // One-event conveniences, each published at once.
  void upsertNode(const codec::Node& node) { write().upsertNode(node); }
  bool deleteNode(std::string_view name) { return write().deleteNode(name); }
  void upsertPod(const codec::Pod& pod) { write().upsertPod(pod); }
  bool deletePod(std::string_view uid) { return write().deletePod(uid); }
  ReserveResult reserve(const ReservationRequest& r, Clock::time_point now) { return write().reserve(r, now); }
  bool unreserve(std::string_view podUid) { return write().unreserve(podUid); }
  size_t expire(Clock::time_point now) { return write().expire(now); }

  CacheStats stats() const;
  // How this cache reads nodes and pods; the binder keys its reservations with it.
  const plugins::Interpretation& interpretation() const;

  // The charge of pod `uid` when the cache holds one (bound or reserved). Takes the writer lock:
  // for rare verbs (preempt), never for the filter path.
  bool podCharge(std::string_view uid, PodCharge& out);

 private:
  friend class Reader;
  friend class CacheState;

  std::atomic<const detail::SnapshotData*> root_{nullptr};
  EpochDomain epoch_;
  std::mutex writerMutex_;
  std::unique_ptr<CacheState> state_;
};

inline Snapshot Reader::acquire() {
  if (depth_++ == 0) cache_->epoch_.enter(slot_);
  return Snapshot(cache_->root_.load(std::memory_order_seq_cst), this);
}

inline void Reader::release() {
  if (--depth_ == 0) cache_->epoch_.leave(slot_);
}

inline void Snapshot::release() {
  if (reader_ != nullptr) reader_->release();
  reader_ = nullptr;
  data_ = nullptr;
}

inline Snapshot& Snapshot::operator=(Snapshot&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    reader_ = other.reader_;
    other.data_ = nullptr;
    other.reader_ = nullptr;
  }
  return *this;
}

}  // namespace fleetsched::cache
