// Cheap FGD scoring: every node's state (GPU model, CPU left, memory left when the model counts
// memory, idle GPU shares as a sorted multiset) is interned once with its fragmentation F(x)
// computed; a node is re-interned only when its use changed (detected by comparing its per-GPU
// use, CPU and memory with the last look), so after a placement only the placed node costs
// anything. The best Δ of a pod class on a state is memoised per (state, pod class), where a pod
// class is (CPU, memory when the model counts it, per-GPU share, GPU count) — the only pod facts
// Δ depends on. Scoring a pod over all nodes is then two array reads per node.
//
// Not thread-safe: one FragCache per CycleState, so per scheduling thread (frag_source.h).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

class FragCache {
 public:
  static constexpr double kNoFit = -std::numeric_limits<double>::infinity();

  explicit FragCache(std::shared_ptr<const FragModel> model);

  const FragModel& model() const { return *model_; }
  const std::shared_ptr<const FragModel>& modelPtr() const { return model_; }

  // The interned state of `node` as it is now.
  uint32_t stateOf(const NodeInfo& node);
  double fragmentationOf(uint32_t state) const { return states_[state].frag; }
  uint32_t podClassOf(const PodInfo& pod);

  // max over the GPU choices FGD considers of F(x) − F(x ⊕ p): every GPU that fits for a shared
  // pod, the tightest fitting GPUs otherwise, no GPU for a CPU pod. kNoFit when nothing fits.
  double bestDelta(uint32_t state, uint32_t podClass);
  // FGD's score of bestDelta, floor(100·σ(Δ / 1000)), memoised too: the exp() per node is what
  // remains otherwise.
  int32_t bestScore(uint32_t state, uint32_t podClass) {
    auto& column = score_[podClass];
    if (column.size() <= state) column.resize(states_.size(), -1);
    if (column[state] < 0) {
      const double delta = bestDelta(state, podClass);
      column[state] = static_cast<int8_t>(fgdScoreOfDelta(delta));
    }
    return column[state];
  }

  // Δ of putting `pod` on GPU `gpu` of `node` (shared pods), or on the GPUs the packer picks
  // when gpu < 0. Not memoised: used once per pod, at GPU selection.
  double deltaOn(const NodeInfo& node, const PodInfo& pod, int gpu);

  // For a shared-GPU pod: picks the GPU of `node` whose use raises fragmentation least (highest
  // FGD score of deltaOn), the lowest index on ties. False when no GPU has room.
  bool pickSharedGpu(const NodeInfo& node, const PodInfo& pod, GpuAssignment& out);

  // Re-interns `node` after its use changed and computes Δ and the score for every pod class
  // seen so far, so the next scoring pass finds them memoised. The owner of the node records
  // (the replay driver after Reserve, the cache writer after a watch event) calls it, which
  // keeps that work off the request path.
  void refresh(const NodeInfo& node);
  // Registers a pod class ahead of its first pod (the replay knows them from the trace).
  void observePodClass(const PodInfo& pod) { podClassOf(pod); }

  // F(x) of a node computed from scratch (tests, reports).
  double fragmentationFromScratch(const NodeInfo& node);
  std::array<double, kBucketCount> bucketsOf(const NodeInfo& node);

  size_t stateCount() const { return states_.size(); }

 private:
  struct State {
    uint32_t access = 0;  // row in access_
    uint8_t gpuCount = 0;
    int64_t cpuLeft = 0;
    int64_t memoryLeft = 0;  // memoryLeftOf
    std::array<int32_t, kMaxGpusPerNode> free{};  // descending
    double frag = 0;
  };
  struct Key {
    uint32_t access;
    uint32_t gpuCount;
    int64_t cpuLeft;
    int64_t memoryLeft;
    std::array<int16_t, kMaxGpusPerNode> free;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct NodeSlot {
    bool valid = false;
    uint8_t gpuCount = 0;
    int64_t cpuLeft = 0;
    int64_t memoryLeft = 0;
    std::string_view model;
    std::array<uint16_t, kMaxGpusPerNode> used{};
    uint32_t state = 0;
  };
  struct PodShape {
    int64_t milliCpu;
    int32_t gpuMilli;
    int32_t gpuCount;
    int64_t memory;  // 0 when the model leaves memory out
  };

  // F through a memo keyed on (model access row, CPU level, memory level, sorted shares): F
  // depends on the CPU and memory left only through which class requests they cover, so many
  // states share one entry. `freeDesc` must be sorted descending.
  double fragmentationMemo(uint32_t access, int64_t cpuLeft, int64_t memoryLeft, const int32_t* freeDesc, int count);
  // What the model sees of a node's memory and of a pod: memory is 0 throughout when no class
  // asks for memory, so states and pod classes differing only in memory stay one.
  int64_t memoryLeftOf(const NodeInfo& node) const;
  PodShape shapeOf(const PodInfo& pod) const;
  uint32_t accessRow(std::string_view model);
  uint32_t intern(uint32_t access, int64_t cpuLeft, int64_t memoryLeft, const NodeInfo& node);
  double deltaAfter(const State& s, const PodShape& p, int freeIndex);
  void resetIfHuge();

  std::shared_ptr<const FragModel> model_;
  std::map<std::string, uint32_t, std::less<>> accessIds_;
  std::vector<std::vector<uint8_t>> access_;
  std::unordered_map<Key, uint32_t, KeyHash> stateIds_;
  std::vector<State> states_;
  std::vector<NodeSlot> nodes_;
  std::map<std::tuple<int64_t, int64_t, int32_t, int32_t>, uint32_t> podClassIds_;
  std::vector<PodShape> podClasses_;
  std::vector<std::vector<double>> delta_;  // [podClass][state]; NaN = not computed yet
  std::vector<std::vector<int8_t>> score_;  // [podClass][state]; -1 = not computed yet
  std::vector<int64_t> cpuThresholds_;      // distinct class CPU requests, ascending
  std::vector<int64_t> memoryThresholds_;   // distinct class memory requests, ascending
  // Key::cpuLeft and Key::memoryLeft hold the levels.
  std::unordered_map<Key, double, KeyHash> fragMemo_;
};

}  // namespace fleetsched::plugins::policies
