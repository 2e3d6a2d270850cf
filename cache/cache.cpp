#include "cache/cache.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/cache_state.h"

namespace fleetsched::cache {

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
// CacheState: construction, publication of versions, stats, the name index. Its node, pod and
// reservation members are in cache_nodes.cpp, cache_pods.cpp and cache_reservations.cpp.

CacheState::CacheState(Cache& cache, plugins::Interpretation interpretation)
    : cache_(cache), builder_(std::move(interpretation)) {
  index_ = new NameIndex;
  index_->generation = version_ + 1;
  index_->mask = 15;
  index_->slots.resize(16);
  indexDirty_ = true;
  dirty_ = true;
  publish();
}

CacheState::~CacheState() {
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

// --- publication -----------------------------------------------------------------------------

void CacheState::publish() {
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

void CacheState::updateStats() {
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

CacheStats CacheState::stats() const {
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

// --- name index ------------------------------------------------------------------------------

NameIndex& CacheState::mutableIndex() {
  dirty_ = true;
  if (!indexDirty_) {
    pendingRetire_.emplace_back(index_, &deleteObject<NameIndex>);
    index_ = new NameIndex(*index_);
    index_->generation = version_ + 1;  // the version publish() will give it
    indexDirty_ = true;
  }
  return *index_;
}

void CacheState::indexPut(NameIndex& index, uint32_t hash, uint32_t id) {
  for (uint32_t i = hash & index.mask;; i = (i + 1) & index.mask) {
    if (index.slots[i].id == kNoNode) {
      index.slots[i] = {hash, id};
      ++index.size;
      return;
    }
  }
}

void CacheState::indexInsert(std::string_view name, uint32_t id) {
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

void CacheState::indexErase(std::string_view name, uint32_t id) {
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

const plugins::Interpretation& Cache::Writer::interpretation() const { return cache_->interpretation(); }
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
