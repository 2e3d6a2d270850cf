#include "plugins/policies/fgd/frag_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "plugins/policies/policy_common.h"

namespace fleetsched::plugins::policies {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
// States are never freed; a long-running server starts over when this many pile up.
constexpr size_t kMaxStates = size_t{1} << 20;

}  // namespace

size_t FragCache::KeyHash::operator()(const Key& k) const {
  uint64_t h = (uint64_t{k.access} << 40) ^ (uint64_t{k.gpuCount} << 32) ^ static_cast<uint64_t>(k.cpuLeft) ^
               (static_cast<uint64_t>(k.memoryLeft) * 0x9e3779b97f4a7c15ull);
  uint64_t words[kMaxGpusPerNode / 4];
  std::memcpy(words, k.free.data(), sizeof(words));
  for (uint64_t w : words) h = (h ^ w) * 0x100000001b3ull + (h >> 29);
  return static_cast<size_t>(h ^ (h >> 32));
}

FragCache::FragCache(std::shared_ptr<const FragModel> model) : model_(std::move(model)) {
  for (const auto& c : model_->classes()) cpuThresholds_.push_back(c.pod.milliCpu);
  std::sort(cpuThresholds_.begin(), cpuThresholds_.end());
  cpuThresholds_.erase(std::unique(cpuThresholds_.begin(), cpuThresholds_.end()), cpuThresholds_.end());
  if (model_->countsMemory()) {
    for (const auto& c : model_->classes()) memoryThresholds_.push_back(c.pod.memory);
    std::sort(memoryThresholds_.begin(), memoryThresholds_.end());
    memoryThresholds_.erase(std::unique(memoryThresholds_.begin(), memoryThresholds_.end()), memoryThresholds_.end());
  }
}

int64_t FragCache::memoryLeftOf(const NodeInfo& node) const {
  return model_->countsMemory() ? node.allocMemory - node.usedMemory : 0;
}

FragCache::PodShape FragCache::shapeOf(const PodInfo& pod) const {
  return {pod.milliCpu, pod.wantsGpu() ? pod.gpuMilli : 0, pod.wantsGpu() ? pod.gpuCount : 0,
          model_->countsMemory() ? pod.memory : 0};
}

double FragCache::fragmentationMemo(uint32_t access, int64_t cpuLeft, int64_t memoryLeft, const int32_t* freeDesc,
                                     int count) {
  const auto cpuLevel = std::upper_bound(cpuThresholds_.begin(), cpuThresholds_.end(), cpuLeft) - cpuThresholds_.begin();
  const auto memoryLevel =
      std::upper_bound(memoryThresholds_.begin(), memoryThresholds_.end(), memoryLeft) - memoryThresholds_.begin();
  Key key{access, static_cast<uint32_t>(count), static_cast<int64_t>(cpuLevel), static_cast<int64_t>(memoryLevel), {}};
  for (int i = 0; i < count; ++i) key.free[i] = static_cast<int16_t>(freeDesc[i]);
  auto [it, inserted] = fragMemo_.try_emplace(key, 0.0);
  if (inserted) {
    it->second = model_->fragmentation(access_[access].data(), cpuLeft, {freeDesc, static_cast<size_t>(count)}, memoryLeft);
  }
  return it->second;
}

uint32_t FragCache::accessRow(std::string_view model) {
  auto it = accessIds_.find(model);
  if (it != accessIds_.end()) return it->second;
  const auto id = static_cast<uint32_t>(access_.size());
  access_.push_back(model_->accessFor(model));
  accessIds_.emplace(std::string(model), id);
  return id;
}

uint32_t FragCache::intern(uint32_t access, int64_t cpuLeft, int64_t memoryLeft, const NodeInfo& node) {
  Key key{access, node.gpuCount, cpuLeft, memoryLeft, {}};
  State s;
  s.access = access;
  s.gpuCount = node.gpuCount;
  s.cpuLeft = cpuLeft;
  s.memoryLeft = memoryLeft;
  for (int i = 0; i < node.gpuCount; ++i) s.free[i] = node.gpuFreeMilli(i);
  std::sort(s.free.begin(), s.free.begin() + s.gpuCount, std::greater<>());
  for (int i = 0; i < s.gpuCount; ++i) key.free[i] = static_cast<int16_t>(s.free[i]);
  auto [it, inserted] = stateIds_.try_emplace(key, static_cast<uint32_t>(states_.size()));
  if (inserted) {
    s.frag = fragmentationMemo(access, cpuLeft, memoryLeft, s.free.data(), s.gpuCount);
    states_.push_back(s);
  }
  return it->second;
}

void FragCache::resetIfHuge() {
  if (states_.size() < kMaxStates) return;
  stateIds_.clear();
  states_.clear();
  fragMemo_.clear();
  for (auto& n : nodes_) n.valid = false;
  for (auto& d : delta_) d.clear();
  for (auto& d : score_) d.clear();
}

uint32_t FragCache::stateOf(const NodeInfo& node) {
  if (node.id >= nodes_.size()) nodes_.resize(node.id + 1);
  NodeSlot& slot = nodes_[node.id];
  const int64_t cpu = cpuLeft(node);
  const int64_t memory = memoryLeftOf(node);
  // The whole fixed-size array is compared (unused entries stay 0): a constant-size memcmp
  // compiles to two vector compares instead of a library call.
  if (slot.valid && slot.cpuLeft == cpu && slot.memoryLeft == memory && slot.gpuCount == node.gpuCount &&
      slot.model.data() == node.gpuModelName.data() && slot.model.size() == node.gpuModelName.size() &&
      std::memcmp(slot.used.data(), node.gpuUsedMilli.data(), sizeof(slot.used)) == 0) {
    return slot.state;
  }
  resetIfHuge();
  slot.valid = true;
  slot.cpuLeft = cpu;
  slot.memoryLeft = memory;
  slot.gpuCount = node.gpuCount;
  slot.model = node.gpuModelName;
  slot.used = node.gpuUsedMilli;
  slot.state = intern(accessRow(node.gpuModelName), cpu, memory, node);
  return slot.state;
}

uint32_t FragCache::podClassOf(const PodInfo& pod) {
  const PodShape p = shapeOf(pod);
  auto [it, inserted] =
      podClassIds_.try_emplace({p.milliCpu, p.memory, p.gpuMilli, p.gpuCount}, static_cast<uint32_t>(podClasses_.size()));
  if (inserted) {
    podClasses_.push_back(p);
    delta_.emplace_back();
    score_.emplace_back();
  }
  return it->second;
}

// Δ after taking p's CPU and, for GPU pods, p's share from the free list. freeIndex >= 0 names
// the GPU (a position in the descending list) a shared pod goes to; -1 packs like the reference
// allocator: the tightest GPUs that fit, ascending.
double FragCache::deltaAfter(const State& s, const PodShape& p, int freeIndex) {
  std::array<int32_t, kMaxGpusPerNode> free = s.free;
  if (p.gpuCount > 0) {
    if (freeIndex >= 0) {
      free[freeIndex] -= p.gpuMilli;
    } else {
      int need = p.gpuCount;
      for (int i = s.gpuCount - 1; i >= 0 && need > 0; --i) {
        if (free[i] >= p.gpuMilli) {
          free[i] -= p.gpuMilli;
          --need;
        }
      }
      if (need > 0) return kNoFit;
    }
    // Back to descending order; at most a few shares moved, so insertion sort is cheapest.
    for (int i = 1; i < s.gpuCount; ++i) {
      const int32_t v = free[i];
      int j = i;
      for (; j > 0 && free[j - 1] < v; --j) free[j] = free[j - 1];
      free[j] = v;
    }
  }
  return s.frag - fragmentationMemo(s.access, s.cpuLeft - p.milliCpu, s.memoryLeft - p.memory, free.data(), s.gpuCount);
}

double FragCache::bestDelta(uint32_t state, uint32_t podClass) {
  auto& column = delta_[podClass];
  if (column.size() <= state) column.resize(states_.size(), kUnknown);
  double& memo = column[state];
  if (!std::isnan(memo)) return memo;
  const State& s = states_[state];
  const PodShape& p = podClasses_[podClass];
  double best = kNoFit;
  if (p.gpuCount == 1 && p.gpuMilli < kMilliPerGpu) {
    for (int j = 0; j < s.gpuCount; ++j) {
      if (s.free[j] < p.gpuMilli) break;  // descending: no later GPU fits either
      if (j > 0 && s.free[j] == s.free[j - 1]) continue;  // same share, same Δ
      best = std::max(best, deltaAfter(s, p, j));
    }
  } else {
    best = deltaAfter(s, p, -1);
  }
  memo = best;
  return best;
}

void FragCache::refresh(const NodeInfo& node) {
  const uint32_t state = stateOf(node);
  for (uint32_t c = 0; c < podClasses_.size(); ++c) bestScore(state, c);
}

double FragCache::deltaOn(const NodeInfo& node, const PodInfo& pod, int gpu) {
  const State& s = states_[stateOf(node)];
  const PodShape p = shapeOf(pod);
  if (gpu < 0) return deltaAfter(s, p, -1);
  const int32_t share = node.gpuFreeMilli(gpu);
  for (int j = 0; j < s.gpuCount; ++j) {
    if (s.free[j] == share) return share >= p.gpuMilli ? deltaAfter(s, p, j) : kNoFit;
  }
  return kNoFit;
}

bool FragCache::pickSharedGpu(const NodeInfo& node, const PodInfo& pod, GpuAssignment& out) {
  int best = -1;
  int32_t bestScore = -1;
  for (int i = 0; i < node.gpuCount; ++i) {
    const int32_t free = node.gpuFreeMilli(i);
    if (free < pod.gpuMilli) continue;
    const int32_t s = fgdScoreOfDelta(deltaOn(node, pod, i));
    if (s > bestScore) {
      best = i;
      bestScore = s;
    }
  }
  if (best < 0) return false;
  out.count = 1;
  out.index[0] = static_cast<uint8_t>(best);
  out.milliEach = pod.gpuMilli;
  return true;
}

double FragCache::fragmentationFromScratch(const NodeInfo& node) {
  std::array<int32_t, kMaxGpusPerNode> free{};
  for (int i = 0; i < node.gpuCount; ++i) free[i] = node.gpuFreeMilli(i);
  return model_->fragmentation(access_[accessRow(node.gpuModelName)].data(), cpuLeft(node), {free.data(), node.gpuCount},
                               memoryLeftOf(node));
}

std::array<double, kBucketCount> FragCache::bucketsOf(const NodeInfo& node) {
  std::array<int32_t, kMaxGpusPerNode> free{};
  for (int i = 0; i < node.gpuCount; ++i) free[i] = node.gpuFreeMilli(i);
  return model_->buckets(access_[accessRow(node.gpuModelName)].data(), cpuLeft(node), {free.data(), node.gpuCount},
                         memoryLeftOf(node));
}

}  // namespace fleetsched::plugins::policies
