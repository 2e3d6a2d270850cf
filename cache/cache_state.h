// Private to cache/cache*.cpp: the writer side of the Cache (CacheState) and the records it keeps
// per node and per pod. Not part of cache's interface: include cache/cache.h.
//
// CacheState's members are defined by topic:
//   cache.cpp               construction, publication of versions, the name index, stats
//   cache_nodes.cpp         node records: upsert, delete, relist sweep, cold records
//   cache_pods.cpp          pod accounting: upsert, delete, charges, waiting pods, workload counts
//   cache_reservations.cpp  the binder's reservations: reserve, unreserve, TTL expiry
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/cache.h"
#include "cache/string_pool.h"
#include "plugins/interpretation.h"

namespace fleetsched::cache {

using detail::NameIndex;
using detail::NodeChunk;
using detail::SnapshotData;
using detail::WorkloadShard;
using plugins::NodeInfo;

constexpr int kMaxPodScalars = 2;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
struct StringEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

// Per-node data readers reach through NodeInfo (name, labels, taints) but plugins rarely read.
// One allocation: this header, then the label and taint ids `strings` describes. Immutable once
// built: a relabelled node gets a new one and the old one is retired with the chunk version.
struct NodeCold {
  std::string_view primaryGpu;  // interned resource name of the per-GPU resource, or empty
  uint32_t nameId = 0;          // in CacheState::strings_, as are the label and taint ids
  plugins::CompactNodeStrings strings;  // last: its ids follow the struct

  static size_t bytesFor(size_t labels, size_t taints) {
    return offsetof(NodeCold, strings) + plugins::CompactNodeStrings::bytesFor(labels, taints);
  }
};
static_assert(offsetof(NodeCold, strings) + sizeof(plugins::CompactNodeStrings) == sizeof(NodeCold),
              "label ids must start right after the header");

enum class PodState : uint8_t { Bound, Reserved, Waiting };

struct ScalarUse {
  uint16_t resource = 0;  // CacheState::resourceId; 0 = unused
  int32_t amount = 0;     // extended resources are whole units; no pod asks for 2^31 GPUs
};

constexpr uint32_t kNoWorkload = UINT32_MAX;

// What the cache remembers per pod that holds (or will hold) resources. Pods that hold nothing
// (pending, terminal) have no record. 56 bytes: a 100,000-pod cluster keeps one per bound pod,
// so what only some records need lives elsewhere (a reservation's deadline in reservations_,
// a waiting pod's node name in waitingOn_).
struct PodRecord {
  int64_t milliCpu = 0;
  int64_t memory = 0;
  std::array<ScalarUse, kMaxPodScalars> scalars{};
  uint32_t node = kNoNode;    // where the charge is applied (Bound, Reserved)
  uint32_t reservationSlot = 0;
  uint32_t workload = kNoWorkload;  // id in workloadKeys_
  uint32_t seen = 0;          // relist mark of the last upsert; kUnseen: only reserve() made it
  uint16_t indexMask = 0;     // from the gpu-index annotation
  uint16_t appliedMask = 0;   // GPUs charged on the node
  uint16_t zone = 0;          // zone the workload was counted in
  uint16_t gpuMilli : 11 = plugins::kMilliPerGpu;  // 1..1000
  PodState state : 2 = PodState::Bound;
  bool hasIndex : 1 = false;
};
static_assert(sizeof(PodRecord) <= 56);

// A pod UID as the pod table's key: the 16 bytes of a canonical lowercase UUID (what the API
// server assigns), else the text itself (inline up to 16 bytes, longer on the heap). As a
// std::string a 36-character UID took 32 bytes plus a 48-byte heap block.
class PodKey {
 public:
  explicit PodKey(std::string_view uid) {
    uint64_t a, b;
    if (parseUuid(uid, a, b)) {
      kind_ = Kind::Uuid;
      setWords(a, b);
      return;
    }
    size_ = static_cast<uint32_t>(uid.size());
    if (uid.size() <= sizeof raw_) {
      kind_ = Kind::Inline;
      std::memcpy(raw_, uid.data(), uid.size());
    } else {
      kind_ = Kind::Heap;
      char* text = new char[uid.size()];
      std::memcpy(text, uid.data(), uid.size());
      std::memcpy(raw_, &text, sizeof text);
    }
  }
  // A key for lookups only: views `uid` (no copy) unless it is a UUID; never stored.
  static PodKey probe(std::string_view uid) noexcept {
    PodKey k;
    uint64_t a, b;
    if (parseUuid(uid, a, b)) {
      k.setWords(a, b);
      return k;
    }
    k.kind_ = Kind::View;
    k.size_ = static_cast<uint32_t>(uid.size());
    const char* text = uid.data();
    std::memcpy(k.raw_, &text, sizeof text);
    return k;
  }
  PodKey(PodKey&& o) noexcept : size_(o.size_), kind_(o.kind_) {
    std::memcpy(raw_, o.raw_, sizeof raw_);
    o.kind_ = Kind::Uuid;  // the heap text, if any, moved here
  }
  PodKey(const PodKey&) = delete;
  PodKey& operator=(const PodKey&) = delete;
  PodKey& operator=(PodKey&&) = delete;
  ~PodKey() {
    if (kind_ == Kind::Heap) delete[] heapText();
  }

  std::string str() const {
    if (kind_ != Kind::Uuid) return std::string(text());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(36, '-');
    size_t pos = 0;
    for (int i = 0; i < 32; ++i) {
      if (pos == 8 || pos == 13 || pos == 18 || pos == 23) ++pos;
      const uint64_t w = word(i / 16);
      out[pos++] = kHex[(w >> (60 - 4 * (i % 16))) & 0xF];
    }
    return out;
  }
  size_t hash() const noexcept {
    return kind_ == Kind::Uuid ? mix(word(0), word(1)) : std::hash<std::string_view>{}(text());
  }
  // A UUID-shaped uid is always kept as Uuid, so keys of different kinds never match.
  bool operator==(const PodKey& o) const noexcept {
    if (kind_ == Kind::Uuid || o.kind_ == Kind::Uuid) {
      return kind_ == o.kind_ && word(0) == o.word(0) && word(1) == o.word(1);
    }
    return text() == o.text();
  }

 private:
  enum class Kind : uint8_t { Uuid, Inline, Heap, View };

  PodKey() = default;

  uint64_t word(int i) const noexcept {
    uint64_t w;
    std::memcpy(&w, raw_ + 8 * i, sizeof w);
    return w;
  }
  void setWords(uint64_t a, uint64_t b) {
    std::memcpy(raw_, &a, sizeof a);
    std::memcpy(raw_ + 8, &b, sizeof b);
  }
  char* heapText() const noexcept {
    char* p;
    std::memcpy(&p, raw_, sizeof p);
    return p;
  }
  std::string_view text() const noexcept {
    if (kind_ == Kind::Heap || kind_ == Kind::View) return {heapText(), size_};
    return {raw_, size_};
  }
  static size_t mix(uint64_t a, uint64_t b) noexcept {
    // Any bits of either half may be the ones that differ (generated UIDs often share all but
    // a counter), so mix both into every output bit.
    uint64_t h = a ^ (b * 0x9E3779B97F4A7C15ULL);
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return static_cast<size_t>(h);
  }
  // Canonical 8-4-4-4-12 lowercase hex only, so str() gives back the exact text. Branch-free
  // over the 32 digits: this runs on every pod event.
  static bool parseUuid(std::string_view s, uint64_t& a, uint64_t& b) noexcept {
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return false;
    static constexpr uint8_t kDigit[32] = {0,  1,  2,  3,  4,  5,  6,  7,  9,  10, 11, 12, 14, 15, 16, 17,
                                           19, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35};
    static constexpr auto kHexValue = [] {
      std::array<uint8_t, 256> t{};
      t.fill(0x10);  // not a lowercase hex digit
      for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<uint8_t>(c - '0');
      for (int c = 'a'; c <= 'f'; ++c) t[c] = static_cast<uint8_t>(c - 'a' + 10);
      return t;
    }();
    uint64_t hi = 0, lo = 0;
    unsigned bad = 0;
    for (int i = 0; i < 16; ++i) {
      const uint8_t v = kHexValue[static_cast<uint8_t>(s[kDigit[i]])];
      bad |= v;
      hi = (hi << 4) | (v & 0xF);
    }
    for (int i = 16; i < 32; ++i) {
      const uint8_t v = kHexValue[static_cast<uint8_t>(s[kDigit[i]])];
      bad |= v;
      lo = (lo << 4) | (v & 0xF);
    }
    a = hi;
    b = lo;
    return (bad & 0x10) == 0;
  }

  alignas(8) char raw_[16] = {};  // UUID bytes / inline text / heap text pointer
  uint32_t size_ = 0;             // text length (Inline, Heap)
  Kind kind_ = Kind::Uuid;
};
static_assert(sizeof(PodKey) == 24);

struct PodKeyHash {
  size_t operator()(const PodKey& k) const noexcept { return k.hash(); }
};

constexpr uint32_t kUnseen = 0;

// A noexcept hash that libstdc++ counts as fast: nodes carry no cached hash (88 bytes each).
using PodMap = std::unordered_map<PodKey, PodRecord, PodKeyHash>;

// ---------------------------------------------------------------------------------------------
// Writer-side state. Everything here is touched only under Cache::writerMutex_.

class CacheState {
 public:
  // Construction, publication, the name index and stats: cache.cpp.
  CacheState(Cache& cache, plugins::Interpretation interpretation);
  ~CacheState();

  // --- nodes (cache_nodes.cpp) -----------------------------------------------------------------

  void upsertNode(const codec::Node& node);
  bool deleteNode(std::string_view name);
  void replaceNodes(std::span<const codec::Node> nodes);

  // --- pods (cache_pods.cpp) -------------------------------------------------------------------

  void upsertPod(const codec::Pod& pod);
  bool deletePod(std::string_view uid);
  void replacePods(std::span<const codec::Pod> pods);

  // --- relists ---------------------------------------------------------------------------------

  static uint32_t nextMark(uint32_t mark) { return mark + 1 == kUnseen ? mark + 2 : mark + 1; }
  void beginNodeRelist() { nodeMark_ = nextMark(nodeMark_); }
  void beginPodRelist() { podMark_ = nextMark(podMark_); }

  size_t sweepNodes();  // cache_nodes.cpp
  size_t sweepPods();   // cache_pods.cpp

  // --- reservations (cache_reservations.cpp) ---------------------------------------------------

  ReserveResult reserve(const ReservationRequest& r, Clock::time_point now);
  bool unreserve(std::string_view uid);
  size_t expire(Clock::time_point now);

  // --- publication -----------------------------------------------------------------------------

  void publish();
  void updateStats();
  bool podCharge(std::string_view uid, PodCharge& out) const;  // cache_pods.cpp
  CacheStats stats() const;

  const plugins::Interpretation& interpretation() const { return builder_.interpretation(); }

 private:
  using Retire = std::pair<void*, EpochDomain::Deleter>;

  template <class T>
  static void deleteObject(void*, void* object) {
    delete static_cast<T*>(object);
  }
  static void deleteCold(void* context, void* object) {
    auto* self = static_cast<CacheState*>(context);
    auto* cold = static_cast<NodeCold*>(object);
    self->destroyCold(cold);
  }

  // --- node storage ----------------------------------------------------------------------------

  const NodeInfo& nodeRef(uint32_t id) const { return chunks_[id >> kChunkShift]->nodes[id & (kChunkSize - 1)]; }

  NodeChunk& mutableChunk(uint32_t c) {
    dirty_ = true;
    if (!chunkDirty_[c]) {
      pendingRetire_.emplace_back(chunks_[c], &deleteObject<NodeChunk>);
      chunks_[c] = new NodeChunk(*chunks_[c]);
      chunkDirty_[c] = 1;
      dirtyChunks_.push_back(c);
    }
    return *chunks_[c];
  }
  NodeInfo& mutableNode(uint32_t id) { return mutableChunk(id >> kChunkShift).nodes[id & (kChunkSize - 1)]; }

  uint32_t lookup(std::string_view name) const { return detail::findIdIn(*index_, chunks_, name); }

  // The name index (cache.cpp).
  NameIndex& mutableIndex();
  static void indexPut(NameIndex& index, uint32_t hash, uint32_t id);
  void indexInsert(std::string_view name, uint32_t id);
  void indexErase(std::string_view name, uint32_t id);

  // Node records and their cold part (cache_nodes.cpp).
  bool sameLabelsAndTaints(const NodeCold& cold, const codec::Node& node) const;
  static bool sameHot(const NodeInfo& a, const NodeInfo& b);
  NodeCold* makeCold(const codec::Node& node, std::string_view primary);
  void destroyCold(NodeCold* cold);
  void retireCold(NodeCold* cold) { pendingRetire_.emplace_back(cold, &deleteCold); }
  void addNode(const codec::Node& node, NodeInfo& info, std::string_view primary);

  // Parses the uid once; the table then compares 16-byte keys.
  PodMap::iterator findPod(std::string_view uid) { return pods_.find(PodKey::probe(uid)); }
  PodMap::const_iterator findPod(std::string_view uid) const { return pods_.find(PodKey::probe(uid)); }

  // --- pod charges (cache_pods.cpp) ------------------------------------------------------------

  uint16_t resourceId(std::string_view name);
  std::string_view resourceName(uint16_t id) const { return resourceNames_[id - 1]; }
  void fillRequests(PodRecord& rec, const codec::Pod& pod);
  void refill(PodRecord& rec, const codec::Pod& pod);
  static bool sameRequests(const PodRecord& a, const PodRecord& b);
  void place(const PodKey& uid, PodRecord& rec, std::string_view nodeName, uint16_t mask, bool explicitMask);
  void wait(std::string uid, std::string_view nodeName);
  void unwait(const PodKey& key);
  static uint16_t pickGpus(const NodeInfo& n, int count, int milli);
  void charge(PodRecord& rec, uint32_t id, uint16_t mask, bool explicitMask);
  void uncharge(PodRecord& rec);
  void removeReservation(PodRecord& rec);  // cache_reservations.cpp
  void releaseWorkloadKey(PodRecord& rec);

  // --- workload zone counts (cache_pods.cpp) ---------------------------------------------------

  WorkloadShard& mutableShard(uint32_t s, uint32_t needStride);
  void addWorkload(std::string_view key, uint16_t zone, int delta);

  // --- members ---------------------------------------------------------------------------------

  Cache& cache_;
  NodeBuilder builder_;
  StringTable strings_;         // node names, label and taint strings (reader-visible)
  StringTable workloadKeys_;    // writer-only
  std::string keyScratch_;

  // Working version: chunks_ / index_ / shards_ entries whose dirty flag is set are private
  // copies; the rest are shared with the published version and must not be written.
  std::vector<NodeChunk*> chunks_;
  std::vector<uint8_t> chunkDirty_;
  std::vector<uint32_t> dirtyChunks_;
  NameIndex* index_ = nullptr;
  bool indexDirty_ = false;
  std::array<WorkloadShard*, kWorkloadShards> shards_{};
  std::array<uint8_t, kWorkloadShards> shardDirty_{};
  std::vector<uint32_t> dirtyShards_;
  std::vector<Retire> pendingRetire_;  // replaced by the working version; retired at publish
  bool dirty_ = false;

  std::vector<NodeCold*> cold_;  // by node id; nullptr for holes
  std::vector<uint32_t> nodeSeen_;  // by node id: relist mark of the last upsert
  uint32_t nodeMark_ = 1;
  uint32_t podMark_ = 1;
  std::vector<uint32_t> freeIds_;
  uint32_t idLimit_ = 0;
  uint32_t nodeCount_ = 0;
  uint32_t zoneCount_ = 1;
  uint64_t version_ = 0;

  PodMap pods_;
  // Waiting pods (bound to a node the cache does not know): node name → uids, and back.
  std::unordered_map<std::string, std::vector<std::string>, StringHash, StringEqual> waiting_;
  std::unordered_map<std::string, std::string, StringHash, StringEqual> waitingOn_;
  struct Reservation {
    PodMap::value_type* pod;
    int64_t expiresAt;  // Clock ticks
  };
  std::vector<Reservation> reservations_;
  std::vector<std::string> toErase_;
  std::unordered_map<std::string_view, uint16_t> resourceIds_;
  std::vector<std::string_view> resourceNames_;

  uint64_t boundCount_ = 0;
  uint64_t waitingCount_ = 0;
  uint64_t confirmed_ = 0;
  uint64_t expired_ = 0;
  uint64_t released_ = 0;
  uint64_t overcommits_ = 0;

  struct AtomicStats {
    std::atomic<uint64_t> version{0}, nodes{0}, boundPods{0}, waitingPods{0}, live{0}, confirmed{0}, expired{0},
        released{0}, overcommits{0}, retired{0};
  } stats_;
};

}  // namespace fleetsched::cache
