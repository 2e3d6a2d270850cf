// CacheState's node records: upsert (the status heartbeat fast path), delete, file reload and
// relist sweep, and the cold part of each record (name, labels, taints as string ids).
#include "cache/cache_state.h"

#include <new>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace fleetsched::cache {

void CacheState::upsertNode(const codec::Node& node) {
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

bool CacheState::deleteNode(std::string_view name) {
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

void CacheState::replaceNodes(std::span<const codec::Node> nodes) {
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

size_t CacheState::sweepNodes() {
  std::vector<std::string> gone;
  for (uint32_t id = 0; id < idLimit_; ++id) {
    if (cold_[id] != nullptr && nodeSeen_[id] != nodeMark_) gone.emplace_back(nodeRef(id).name);
  }
  for (const auto& name : gone) deleteNode(name);
  return gone.size();
}

bool CacheState::sameLabelsAndTaints(const NodeCold& cold, const codec::Node& node) const {
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

bool CacheState::sameHot(const NodeInfo& a, const NodeInfo& b) {
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

NodeCold* CacheState::makeCold(const codec::Node& node, std::string_view primary) {
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
void CacheState::destroyCold(NodeCold* cold) {
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

void CacheState::addNode(const codec::Node& node, NodeInfo& info, std::string_view primary) {
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

}  // namespace fleetsched::cache
