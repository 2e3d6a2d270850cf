#include "cache/cache.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "plugins/interpretation.h"

namespace fleetsched::cache {

using detail::NameIndex;
using detail::NodeChunk;
using detail::SnapshotData;
using detail::WorkloadShard;
using plugins::NodeInfo;

namespace {

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

}  // namespace

void detail::addWorkloadCounts(const SnapshotData& d, std::string_view workload, std::span<uint32_t> perZone) {
  const uint64_t h = hashName(workload);
  const WorkloadShard* shard = d.workloads[h >> 56];
  if (shard == nullptr) return;
  for (const auto& e : shard->entries) {
    if (e.hash != h || std::string_view(shard->keys).substr(e.keyOffset, e.keyLength) != workload) continue;
    const size_t n = std::min<size_t>(shard->stride, perZone.size());
    for (size_t z = 0; z < n; ++z) perZone[z] += shard->counts[e.countOffset + z];
    return;
  }
}

void Snapshot::collect(std::vector<const NodeInfo*>& out) const {
  if (data_ == nullptr) return;
  out.reserve(out.size() + data_->nodeCount);
  forEachNode([&out](const NodeInfo& n) { out.push_back(&n); });
}

// ---------------------------------------------------------------------------------------------
// Writer-side state. Everything here is touched only under Cache::writerMutex_.

class CacheState {
 public:
  CacheState(Cache& cache, plugins::Interpretation interpretation)
      : cache_(cache), builder_(std::move(interpretation)) {
    index_ = new NameIndex;
    index_->generation = version_ + 1;
    index_->mask = 15;
    index_->slots.resize(16);
    indexDirty_ = true;
    dirty_ = true;
    publish();
  }

  ~CacheState() {
    // No reader may exist any more: free the published version and everything it references.
    const SnapshotData* root = cache_.root_.load(std::memory_order_acquire);
    cache_.epoch_.reclaim();
    for (NodeChunk* c : chunks_) delete c;
    for (WorkloadShard* s : shards_) delete s;
    delete index_;
    delete root;
    for (NodeCold* c : cold_) destroyCold(c);
    for (auto& [obj, del] : pendingRetire_) del(this, obj);
  }

  // --- nodes -----------------------------------------------------------------------------------

  void upsertNode(const codec::Node& node) {
    NodeInfo info;
    const std::string_view primary = builder_.build(node, info);
    uint32_t id = lookup(node.name);
    if (id == kNoNode) {
      addNode(node, info, primary);
      return;
    }
    nodeSeen_[id] = nodeMark_;
    const NodeInfo& old = nodeRef(id);
    NodeCold* cold = cold_[id];
    const bool sameCold = sameLabelsAndTaints(*cold, node) && cold->primaryGpu == primary;
    // Keep what the node's pods use; a shrunk GPU count drops the tail.
    info.usedMilliCpu = old.usedMilliCpu;
    info.usedMemory = old.usedMemory;
    info.usedPods = old.usedPods;
    info.gpuUsedMilli = old.gpuUsedMilli;
    for (int g = info.gpuCount; g < plugins::kMaxGpusPerNode; ++g) info.gpuUsedMilli[g] = 0;
    for (uint8_t i = 0; i < info.scalarCount; ++i) {
      if (const auto* s = old.scalar(info.scalars[i].name)) info.scalars[i].used = s->used;
    }
    info.id = id;
    if (sameCold) {
      info.name = old.name;
      info.labels = old.labels;
      info.taints = old.taints;
      if (sameHot(info, old)) return;  // a status heartbeat: nothing plugins see changed
    } else {
      NodeCold* fresh = makeCold(node, primary);
      retireCold(cold);
      cold_[id] = fresh;
      info.name = strings_.str(fresh->nameId);
      info.labels = plugins::NodeLabels(&fresh->strings);
      info.taints = plugins::NodeTaints(&fresh->strings);
    }
    mutableNode(id) = info;
    zoneCount_ = builder_.zoneCount();
  }

  bool deleteNode(std::string_view name) {
    const uint32_t id = lookup(name);
    if (id == kNoNode) return false;
    // Pods on the node wait for it to come back (normally their deletions follow); its
    // reservations can no longer be honoured.
    const std::string nameCopy(name);
    for (auto& [uid, rec] : pods_) {
      if (rec.node != id) continue;
      if (rec.state == PodState::Reserved) {
        uncharge(rec);
        removeReservation(rec);
        releaseWorkloadKey(rec);
        ++released_;
        toErase_.push_back(uid.str());
      } else if (rec.state == PodState::Bound) {
        uncharge(rec);
        rec.node = kNoNode;
        rec.appliedMask = 0;
        rec.state = PodState::Waiting;
        wait(uid.str(), nameCopy);
        --boundCount_;
      }
    }
    for (const auto& uid : toErase_) pods_.erase(findPod(uid));
    toErase_.clear();

    indexErase(name, id);
    NodeChunk& chunk = mutableChunk(id >> kChunkShift);
    chunk.live &= ~(uint64_t{1} << (id & (kChunkSize - 1)));
    chunk.nodes[id & (kChunkSize - 1)] = NodeInfo{};
    retireCold(cold_[id]);
    cold_[id] = nullptr;
    freeIds_.push_back(id);
    --nodeCount_;
    dirty_ = true;
    return true;
  }

  void replaceNodes(std::span<const codec::Node> nodes) {
    std::unordered_set<std::string_view> keep;
    keep.reserve(nodes.size());
    for (const auto& n : nodes) keep.insert(n.name);
    std::vector<std::string> gone;
    for (uint32_t id = 0; id < idLimit_; ++id) {
      if (cold_[id] != nullptr && !keep.contains(nodeRef(id).name)) gone.emplace_back(nodeRef(id).name);
    }
    for (const auto& name : gone) deleteNode(name);
    for (const auto& n : nodes) upsertNode(n);
  }

  // --- pods ------------------------------------------------------------------------------------

  void upsertPod(const codec::Pod& pod) {
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

  bool deletePod(std::string_view uid) {
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

  void replacePods(std::span<const codec::Pod> pods) {
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

  // --- relists --------------------------------------------------------------------------------

  static uint32_t nextMark(uint32_t mark) { return mark + 1 == kUnseen ? mark + 2 : mark + 1; }
  void beginNodeRelist() { nodeMark_ = nextMark(nodeMark_); }
  void beginPodRelist() { podMark_ = nextMark(podMark_); }

  size_t sweepNodes() {
    std::vector<std::string> gone;
    for (uint32_t id = 0; id < idLimit_; ++id) {
      if (cold_[id] != nullptr && nodeSeen_[id] != nodeMark_) gone.emplace_back(nodeRef(id).name);
    }
    for (const auto& name : gone) deleteNode(name);
    return gone.size();
  }

  size_t sweepPods() {
    std::vector<std::string> gone;
    for (const auto& [uid, rec] : pods_) {
      if (rec.seen != podMark_ && rec.seen != kUnseen) gone.push_back(uid.str());
    }
    for (const auto& uid : gone) deletePod(uid);
    return gone.size();
  }

  // --- reservations ----------------------------------------------------------------------------

  ReserveResult reserve(const ReservationRequest& r, Clock::time_point now) {
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

  bool unreserve(std::string_view uid) {
    auto it = findPod(uid);
    if (it == pods_.end() || it->second.state != PodState::Reserved) return false;
    uncharge(it->second);
    removeReservation(it->second);
    releaseWorkloadKey(it->second);
    ++released_;
    pods_.erase(it);
    return true;
  }

  size_t expire(Clock::time_point now) {
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

  // --- publication -----------------------------------------------------------------------------

  void publish() {
    if (!dirty_) {
      updateStats();  // waiting pods and counters change without a new version
      return;
    }
    auto* data = new SnapshotData;
    data->version = ++version_;
    data->idLimit = idLimit_;
    data->nodeCount = nodeCount_;
    data->zoneCount = zoneCount_;
    data->index = index_;
    // Still private to the writer: stamped before the root store publishes them.
    for (uint32_t c : dirtyChunks_) chunks_[c]->stamp = data->version;
    data->chunks.assign(chunks_.begin(), chunks_.end());
    for (uint32_t s = 0; s < kWorkloadShards; ++s) data->workloads[s] = shards_[s];
    const SnapshotData* old = cache_.root_.load(std::memory_order_relaxed);
    cache_.root_.store(data, std::memory_order_seq_cst);

    auto& epoch = cache_.epoch_;
    if (old != nullptr) epoch.retire(const_cast<SnapshotData*>(old), &deleteObject<SnapshotData>, this);
    for (auto& [obj, del] : pendingRetire_) epoch.retire(obj, del, this);
    pendingRetire_.clear();
    epoch.advance();

    for (uint32_t c : dirtyChunks_) chunkDirty_[c] = 0;
    dirtyChunks_.clear();
    indexDirty_ = false;
    for (uint32_t s : dirtyShards_) shardDirty_[s] = 0;
    dirtyShards_.clear();
    dirty_ = false;
    updateStats();
  }

  void updateStats() {
    auto& s = stats_;
    s.version.store(version_, std::memory_order_relaxed);
    s.nodes.store(nodeCount_, std::memory_order_relaxed);
    s.boundPods.store(boundCount_, std::memory_order_relaxed);
    s.waitingPods.store(waitingCount_, std::memory_order_relaxed);
    s.live.store(reservations_.size(), std::memory_order_relaxed);
    s.confirmed.store(confirmed_, std::memory_order_relaxed);
    s.expired.store(expired_, std::memory_order_relaxed);
    s.released.store(released_, std::memory_order_relaxed);
    s.overcommits.store(overcommits_, std::memory_order_relaxed);
    s.retired.store(cache_.epoch_.pending(), std::memory_order_relaxed);
  }

  bool podCharge(std::string_view uid, PodCharge& out) const {
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

  CacheStats stats() const {
    CacheStats out;
    const auto& s = stats_;
    out.version = s.version.load(std::memory_order_relaxed);
    out.nodes = s.nodes.load(std::memory_order_relaxed);
    out.boundPods = s.boundPods.load(std::memory_order_relaxed);
    out.waitingPods = s.waitingPods.load(std::memory_order_relaxed);
    out.reservationsLive = s.live.load(std::memory_order_relaxed);
    out.reservationsConfirmed = s.confirmed.load(std::memory_order_relaxed);
    out.reservationsExpired = s.expired.load(std::memory_order_relaxed);
    out.reservationsReleased = s.released.load(std::memory_order_relaxed);
    out.gpuOvercommits = s.overcommits.load(std::memory_order_relaxed);
    out.retiredPending = s.retired.load(std::memory_order_relaxed);
    return out;
  }

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

  NameIndex& mutableIndex() {
    dirty_ = true;
    if (!indexDirty_) {
      pendingRetire_.emplace_back(index_, &deleteObject<NameIndex>);
      index_ = new NameIndex(*index_);
      index_->generation = version_ + 1;  // the version publish() will give it
      indexDirty_ = true;
    }
    return *index_;
  }

  static void indexPut(NameIndex& index, uint32_t hash, uint32_t id) {
    for (uint32_t i = hash & index.mask;; i = (i + 1) & index.mask) {
      if (index.slots[i].id == kNoNode) {
        index.slots[i] = {hash, id};
        ++index.size;
        return;
      }
    }
  }

  void indexInsert(std::string_view name, uint32_t id) {
    NameIndex& index = mutableIndex();
    if ((index.size + 1) * 2 > index.mask + 1) {
      NameIndex grown;
      grown.mask = (index.mask + 1) * 2 - 1;
      grown.generation = index.generation;
      grown.slots.resize(grown.mask + 1);
      for (const auto& s : index.slots) {
        if (s.id != kNoNode) indexPut(grown, s.hash, s.id);
      }
      index = std::move(grown);
    }
    indexPut(index, static_cast<uint32_t>(hashName(name)), id);
  }

  void indexErase(std::string_view name, uint32_t id) {
    NameIndex& index = mutableIndex();
    const auto h = static_cast<uint32_t>(hashName(name));
    uint32_t i = h & index.mask;
    while (index.slots[i].id != id) i = (i + 1) & index.mask;
    // Backward-shift deletion: move later entries of the probe run into the hole when their
    // home slot does not lie (cyclically) between the hole and their position.
    uint32_t hole = i;
    for (uint32_t j = (i + 1) & index.mask; index.slots[j].id != kNoNode; j = (j + 1) & index.mask) {
      const uint32_t home = index.slots[j].hash & index.mask;
      const bool between = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!between) {
        index.slots[hole] = index.slots[j];
        hole = j;
      }
    }
    index.slots[hole] = {};
    --index.size;
  }

  bool sameLabelsAndTaints(const NodeCold& cold, const codec::Node& node) const {
    const plugins::CompactNodeStrings& c = cold.strings;
    if (c.labelCount != node.labels.size() || c.taintCount != node.taints.size()) return false;
    const uint32_t* ids = c.ids();
    for (const auto& kv : node.labels) {
      if (strings_.str(ids[0]) != kv.key || strings_.str(ids[1]) != kv.value) return false;
      ids += 2;
    }
    for (const auto& t : node.taints) {
      const bool same = strings_.str(ids[0]) == t.key && strings_.str(ids[1]) == t.value &&
                        ids[2] == static_cast<uint32_t>(t.effect);
      if (!same) return false;
      ids += 3;
    }
    return true;
  }

  static bool sameHot(const NodeInfo& a, const NodeInfo& b) {
    if (a.zone != b.zone || a.gpuModel != b.gpuModel || a.capacityType != b.capacityType ||
        a.unschedulable != b.unschedulable || a.allocMilliCpu != b.allocMilliCpu || a.allocMemory != b.allocMemory ||
        a.allocPods != b.allocPods || a.gpuMemoryMiB != b.gpuMemoryMiB || a.gpuCount != b.gpuCount ||
        a.scalarCount != b.scalarCount || a.gpuUsedMilli != b.gpuUsedMilli) {
      return false;
    }
    for (uint8_t i = 0; i < a.scalarCount; ++i) {
      if (a.scalars[i].name != b.scalars[i].name || a.scalars[i].allocatable != b.scalars[i].allocatable) return false;
    }
    return true;
  }

  NodeCold* makeCold(const codec::Node& node, std::string_view primary) {
    void* mem = ::operator new(NodeCold::bytesFor(node.labels.size(), node.taints.size()));
    auto* cold = new (mem) NodeCold;
    cold->primaryGpu = primary;
    cold->nameId = strings_.acquire(node.name);
    cold->strings.strings = &strings_;
    cold->strings.labelCount = static_cast<uint32_t>(node.labels.size());
    cold->strings.taintCount = static_cast<uint32_t>(node.taints.size());
    uint32_t* ids = cold->strings.ids();
    for (const auto& kv : node.labels) {
      *ids++ = strings_.acquire(kv.key);
      *ids++ = strings_.acquire(kv.value);
    }
    for (const auto& t : node.taints) {
      *ids++ = strings_.acquire(t.key);
      *ids++ = strings_.acquire(t.value);
      *ids++ = static_cast<uint32_t>(t.effect);
    }
    return cold;
  }

  // Releases the cold record's strings and frees it (at reclamation, or with the cache).
  void destroyCold(NodeCold* cold) {
    if (cold == nullptr) return;
    strings_.release(cold->nameId);
    const plugins::CompactNodeStrings& c = cold->strings;
    const uint32_t* ids = c.ids();
    for (uint32_t i = 0; i < c.labelCount * 2; ++i) strings_.release(ids[i]);
    ids += c.labelCount * 2;
    for (uint32_t i = 0; i < c.taintCount; ++i) {
      strings_.release(ids[3 * i]);
      strings_.release(ids[3 * i + 1]);
    }
    cold->~NodeCold();
    ::operator delete(cold);
  }

  void retireCold(NodeCold* cold) { pendingRetire_.emplace_back(cold, &deleteCold); }

  void addNode(const codec::Node& node, NodeInfo& info, std::string_view primary) {
    uint32_t id;
    if (!freeIds_.empty()) {
      id = freeIds_.back();
      freeIds_.pop_back();
    } else {
      id = idLimit_++;
      if ((id >> kChunkShift) >= chunks_.size()) {
        chunks_.push_back(new NodeChunk);
        chunkDirty_.push_back(1);
        dirtyChunks_.push_back(static_cast<uint32_t>(chunks_.size() - 1));
        dirty_ = true;
      }
      cold_.push_back(nullptr);
      nodeSeen_.push_back(0);
    }
    nodeSeen_[id] = nodeMark_;
    NodeCold* cold = makeCold(node, primary);
    cold_[id] = cold;
    info.id = id;
    info.name = strings_.str(cold->nameId);
    info.labels = plugins::NodeLabels(&cold->strings);
    info.taints = plugins::NodeTaints(&cold->strings);
    NodeChunk& chunk = mutableChunk(id >> kChunkShift);
    chunk.nodes[id & (kChunkSize - 1)] = info;
    chunk.live |= uint64_t{1} << (id & (kChunkSize - 1));
    indexInsert(info.name, id);
    ++nodeCount_;
    zoneCount_ = builder_.zoneCount();

    // Pods that were bound to this node before it appeared.
    auto w = waiting_.find(node.name);
    if (w == waiting_.end()) return;
    std::vector<std::string> uids = std::move(w->second);
    waiting_.erase(w);
    for (const auto& uid : uids) {
      waitingOn_.erase(uid);
      auto it = findPod(uid);
      if (it == pods_.end()) continue;
      --waitingCount_;
      charge(it->second, id, it->second.indexMask, it->second.hasIndex);
      it->second.state = PodState::Bound;
      ++boundCount_;
    }
  }

  // Parses the uid once; the table then compares 16-byte keys.
  PodMap::iterator findPod(std::string_view uid) { return pods_.find(PodKey::probe(uid)); }
  PodMap::const_iterator findPod(std::string_view uid) const { return pods_.find(PodKey::probe(uid)); }

  // --- pod charges -----------------------------------------------------------------------------

  // Small ids for the GPU resources pods request, so a pod record stays compact.
  uint16_t resourceId(std::string_view name) {
    auto it = resourceIds_.find(name);
    if (it != resourceIds_.end()) return it->second;
    const std::string_view interned = builder_.internResource(name);
    resourceNames_.push_back(interned);
    const auto id = static_cast<uint16_t>(resourceNames_.size());  // 0 = none
    resourceIds_.emplace(interned, id);
    return id;
  }
  std::string_view resourceName(uint16_t id) const { return resourceNames_[id - 1]; }

  void fillRequests(PodRecord& rec, const codec::Pod& pod) {
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
  void refill(PodRecord& rec, const codec::Pod& pod) {
    fillRequests(rec, pod);
    releaseWorkloadKey(rec);
    if (builder_.interpretation().workloadKey(pod, keyScratch_)) {
      rec.workload = workloadKeys_.acquire(keyScratch_);
    }
  }

  static bool sameRequests(const PodRecord& a, const PodRecord& b) {
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
  void place(const PodKey& uid, PodRecord& rec, std::string_view nodeName, uint16_t mask, bool explicitMask) {
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
  void wait(std::string uid, std::string_view nodeName) {
    auto [it, _] = waiting_.try_emplace(std::string(nodeName));
    it->second.push_back(uid);
    waitingOn_.insert_or_assign(std::move(uid), std::string(nodeName));
    ++waitingCount_;
  }

  void unwait(const PodKey& key) {
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
  static uint16_t pickGpus(const NodeInfo& n, int count, int milli) {
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

  void charge(PodRecord& rec, uint32_t id, uint16_t mask, bool explicitMask) {
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

  void uncharge(PodRecord& rec) {
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

  void removeReservation(PodRecord& rec) {
    const uint32_t slot = rec.reservationSlot;
    reservations_[slot] = reservations_.back();
    reservations_[slot].pod->second.reservationSlot = slot;
    reservations_.pop_back();
  }

  // Drops the record's reference to its workload key (its counts are already removed).
  void releaseWorkloadKey(PodRecord& rec) {
    if (rec.workload != kNoWorkload) workloadKeys_.release(rec.workload);
    rec.workload = kNoWorkload;
  }

  // --- workload zone counts --------------------------------------------------------------------

  WorkloadShard& mutableShard(uint32_t s, uint32_t needStride) {
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

  void addWorkload(std::string_view key, uint16_t zone, int delta) {
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

// ---------------------------------------------------------------------------------------------

Cache::Cache(plugins::Interpretation interpretation)
    : state_(std::make_unique<CacheState>(*this, std::move(interpretation))) {}

Cache::~Cache() = default;

CacheStats Cache::stats() const { return state_->stats(); }
bool Cache::podCharge(std::string_view uid, PodCharge& out) {
  std::lock_guard<std::mutex> lock(writerMutex_);
  return state_->podCharge(uid, out);
}
const plugins::Interpretation& Cache::interpretation() const { return state_->interpretation(); }

Cache::Writer::Writer(Cache& cache) : cache_(&cache), lock_(cache.writerMutex_) {}
Cache::Writer::Writer(Cache& cache, std::try_to_lock_t) : cache_(&cache), lock_(cache.writerMutex_, std::try_to_lock) {}
std::optional<Cache::Writer> Cache::tryWrite() {
  Writer w(*this, std::try_to_lock);
  if (!w.lock_.owns_lock()) return std::nullopt;
  return std::optional<Writer>(std::move(w));
}
Cache::Writer::Writer(Writer&& other) noexcept : cache_(other.cache_), lock_(std::move(other.lock_)) {
  other.cache_ = nullptr;
}
Cache::Writer::~Writer() {
  if (cache_ != nullptr && lock_.owns_lock()) cache_->state_->publish();
}

void Cache::Writer::upsertNode(const codec::Node& node) { cache_->state_->upsertNode(node); }
bool Cache::Writer::deleteNode(std::string_view name) { return cache_->state_->deleteNode(name); }
void Cache::Writer::upsertPod(const codec::Pod& pod) { cache_->state_->upsertPod(pod); }
bool Cache::Writer::deletePod(std::string_view uid) { return cache_->state_->deletePod(uid); }
void Cache::Writer::replaceNodes(std::span<const codec::Node> nodes) { cache_->state_->replaceNodes(nodes); }
void Cache::Writer::replacePods(std::span<const codec::Pod> pods) { cache_->state_->replacePods(pods); }
ReserveResult Cache::Writer::reserve(const ReservationRequest& r, Clock::time_point now) {
  return cache_->state_->reserve(r, now);
}
bool Cache::Writer::unreserve(std::string_view uid) { return cache_->state_->unreserve(uid); }
bool Cache::Writer::podCharge(std::string_view uid, PodCharge& out) const { return cache_->state_->podCharge(uid, out); }
size_t Cache::Writer::expire(Clock::time_point now) { return cache_->state_->expire(now); }
void Cache::Writer::publish() { cache_->state_->publish(); }
void Cache::Writer::beginNodeRelist() { cache_->state_->beginNodeRelist(); }
size_t Cache::Writer::sweepNodes() { return cache_->state_->sweepNodes(); }
void Cache::Writer::beginPodRelist() { cache_->state_->beginPodRelist(); }
size_t Cache::Writer::sweepPods() { return cache_->state_->sweepPods(); }

Reader::Reader(Cache& cache) : cache_(&cache), slot_(cache.epoch_.registerReader()) {
  // More reading threads than kMaxReaders is a configuration bug, not a runtime condition.
  if (slot_ < 0) std::abort();
}
Reader::~Reader() {
  assert(depth_ == 0 && "a Snapshot outlives its Reader");
  cache_->epoch_.unregisterReader(slot_);
}

}  // namespace fleetsched::cache
