// One immutable, published version of the cluster state, as readers see it.
//
// Layout: node records live in fixed chunks of kChunkSize NodeInfo; a snapshot is a table of
// chunk pointers plus a name index and the workload zone counts. The writer copies only the
// chunks it changes (one pod event republishes one chunk), so consecutive snapshots share most
// chunks. Node ids are slots in the chunk table: stable while the node exists, reused after it
// is deleted; ids below idLimit() may be holes (node() returns nullptr for them).
//
// A Snapshot handle (from cache::Reader::acquire) keeps its version alive until it is
// destroyed; everything it returns points into that version. It implements
// plugins::ClusterState, so plugins take it directly.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/framework.h"

namespace fleetsched::cache {

constexpr uint32_t kChunkShift = 6;
constexpr uint32_t kChunkSize = 1U << kChunkShift;
constexpr uint32_t kNoNode = UINT32_MAX;
constexpr uint32_t kWorkloadShards = 256;

inline uint64_t hashName(std::string_view s) { return std::hash<std::string_view>{}(s); }

namespace detail {

struct NodeChunk {
  uint64_t live = 0;   // bit i set: nodes[i] holds a node
  uint64_t stamp = 0;  // the version that published this copy: a chunk is never changed after
  std::array<plugins::NodeInfo, kChunkSize> nodes{};
};

// Name → node id. Open addressing with linear probing; deletion shifts entries back, so there
// are no tombstones. Capacity is a power of two kept at most half full.
struct NameIndex {
  struct Slot {
    uint32_t hash = 0;
    uint32_t id = kNoNode;  // kNoNode: empty
  };
  uint32_t mask = 0;
  uint32_t size = 0;
  std::vector<Slot> slots;
  // The version of the first snapshot that published this index. Every change to the node set
  // (or to which id a name has) copies the index, so equal generations mean equal id -> name maps.
  uint64_t generation = 0;
};

// Pods per zone for the workloads whose key hashes into this shard. Each entry owns `stride`
// counters starting at countOffset; its key is keys[keyOffset, keyOffset + keyLength).
struct WorkloadShard {
  struct Entry {
    uint64_t hash = 0;
    uint32_t keyOffset = 0;
    uint32_t keyLength = 0;
    uint32_t countOffset = 0;
  };
  uint32_t stride = 0;
  std::vector<Entry> entries;
  std::string keys;
  std::vector<uint32_t> counts;
};

struct SnapshotData {
  uint64_t version = 0;
  uint32_t idLimit = 0;    // node ids are < idLimit
  uint32_t nodeCount = 0;  // live nodes
  uint32_t zoneCount = 1;  // zone ids in use, "no zone" (0) included
  const NameIndex* index = nullptr;
  std::vector<const NodeChunk*> chunks;
  std::array<const WorkloadShard*, kWorkloadShards> workloads{};
};

inline const plugins::NodeInfo* nodeAt(const SnapshotData& d, uint32_t id) {
  if (id >= d.idLimit) return nullptr;
  const NodeChunk* c = d.chunks[id >> kChunkShift];
  const uint32_t slot = id & (kChunkSize - 1);
  return (c->live >> slot) & 1U ? &c->nodes[slot] : nullptr;
}

// Probes `index` for `name`; `chunks` is the published or the writer's working chunk table.
template <class Chunks>
uint32_t findIdIn(const NameIndex& index, const Chunks& chunks, std::string_view name) {
  if (index.size == 0) return kNoNode;
  const auto h = static_cast<uint32_t>(hashName(name));
  for (uint32_t i = h & index.mask;; i = (i + 1) & index.mask) {
    const NameIndex::Slot& s = index.slots[i];
    if (s.id == kNoNode) return kNoNode;
    if (s.hash == h && chunks[s.id >> kChunkShift]->nodes[s.id & (kChunkSize - 1)].name == name) return s.id;
  }
}

inline uint32_t findId(const SnapshotData& d, std::string_view name) {
  return d.index == nullptr ? kNoNode : findIdIn(*d.index, d.chunks, name);
}

void addWorkloadCounts(const SnapshotData& d, std::string_view workload, std::span<uint32_t> perZone);

}  // namespace detail

class Reader;

class Snapshot final : public plugins::ClusterState {
 public:
  Snapshot() = default;  // empty: no nodes
  Snapshot(Snapshot&& other) noexcept : data_(other.data_), reader_(other.reader_) {
    other.data_ = nullptr;
    other.reader_ = nullptr;
  }
  Snapshot& operator=(Snapshot&& other) noexcept;
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  ~Snapshot() override { release(); }

  // The node called `name`, or nullptr.
  const plugins::NodeInfo* find(std::string_view name) const {
    if (data_ == nullptr) return nullptr;
    const uint32_t id = detail::findId(*data_, name);
    return id == kNoNode ? nullptr : detail::nodeAt(*data_, id);
  }
  // The node with id `id`, or nullptr for a hole or an id out of range.
  const plugins::NodeInfo* node(uint32_t id) const { return data_ == nullptr ? nullptr : detail::nodeAt(*data_, id); }

  uint32_t idLimit() const { return data_ == nullptr ? 0 : data_->idLimit; }
  uint32_t nodeCount() const { return data_ == nullptr ? 0 : data_->nodeCount; }
  // Increases with every publish; 0 for an empty handle.
  uint64_t version() const { return data_ == nullptr ? 0 : data_->version; }
  // Changes only when a node is added or deleted: snapshots with the same value map the same
  // ids to the same names, so per-name-set work (sort orders, encoded names) can be reused
  // across pod events. 0 for an empty handle.
  uint64_t nameSetVersion() const {
    return data_ == nullptr || data_->index == nullptr ? 0 : data_->index->generation;
  }

  // Calls f(const NodeInfo&) for every node in id order.
  template <class F>
  void forEachNode(F&& f) const {
    if (data_ == nullptr) return;
    for (const detail::NodeChunk* c : data_->chunks) {
      for (uint64_t live = c->live; live != 0; live &= live - 1) f(c->nodes[__builtin_ctzll(live)]);
    }
  }
  // Node ids come in chunks of kChunkSize: chunk c holds ids [c * kChunkSize, (c + 1) *
  // kChunkSize). A chunk's stamp is the version that published its records; records are never
  // changed in place, so an equal stamp in a later snapshot means equal records, and data
  // derived per node can be refreshed chunk by chunk (a pod event republishes one chunk).
  uint32_t chunkCount() const { return data_ == nullptr ? 0 : static_cast<uint32_t>(data_->chunks.size()); }
  uint64_t chunkStamp(uint32_t c) const { return data_->chunks[c]->stamp; }
  template <class F>
  void forEachNodeInChunk(uint32_t c, F&& f) const {
    const detail::NodeChunk* chunk = data_->chunks[c];
    for (uint64_t live = chunk->live; live != 0; live &= live - 1) f(chunk->nodes[__builtin_ctzll(live)]);
  }

  // Appends a pointer to every node, in id order: a NodeSpan over the whole cluster.
  void collect(std::vector<const plugins::NodeInfo*>& out) const;

  // plugins::ClusterState
  uint32_t zoneCount() const override { return data_ == nullptr ? 1 : data_->zoneCount; }
  void workloadZoneCounts(std::string_view workload, std::span<uint32_t> perZone) const override {
    if (data_ != nullptr) detail::addWorkloadCounts(*data_, workload, perZone);
  }

 private:
  friend class Reader;
  Snapshot(const detail::SnapshotData* data, Reader* reader) : data_(data), reader_(reader) {}
  void release();

  const detail::SnapshotData* data_ = nullptr;
  Reader* reader_ = nullptr;
};

}  // namespace fleetsched::cache
