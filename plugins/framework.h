// The plugin API, modelled on the Kubernetes scheduling framework and limited to the extension
// points an extender serves: PreFilter, Filter, PreScore, Score, NormalizeScore, plus GPU
// selection at Reserve for the binder and replay, and a preemption check.
//
// Plugins see plain structs (PodInfo, NodeInfo) and a read-only ClusterState, never JSON or
// sockets. Plugins are immutable after creation and shared by every request and thread; per-pod
// state and per-thread memos live in CycleState (a plugin's slot survives from pod to pod). Filter and Score take a NodeBatch (plugins/node_columns.h): the records
// and a compact row per node, so their loops run over contiguous data. Filter writes a verdict
// per node as a code (FailureCodes numbers the distinct failures); a reason is a constant string
// or is formatted into the CycleState arena (only for failures, so the passing path never
// allocates).
//
// Ownership: unique_ptr transfers, references borrow, raw pointers only where null is
// meaningful.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codec/model.h"
#include "plugins/node_labels.h"

namespace fleetsched::plugins {

constexpr int kMaxGpusPerNode = 16;
constexpr int kMaxNodeScore = 100;      // plugin scores are 0..kMaxNodeScore
constexpr int kMaxExtenderScore = 10;   // scores on the wire are 0..kMaxExtenderScore
constexpr int32_t kMilliPerGpu = 1000;

enum class CapacityType : uint8_t { Unknown, OnDemand, Spot, Reserved };

// One extended resource a plugin filters on (nvidia.com/gpu, nvidia.com/mig-1g.5gb, ...).
struct ScalarResource {
  std::string_view name;  // interned by whoever built the NodeInfo
  int64_t allocatable = 0;
  int64_t used = 0;       // requests of pods bound or reserved on the node
};

constexpr int kMaxScalarsPerNode = 8;

// A compact per-node record: what the plugins need and nothing more. Built by the cache from a
// Node object plus the pods bound to it, by the full-Nodes request path from the request's
// Node objects, and by replay from a trace row. Strings point to storage the builder owns for
// at least as long as the record is readable.
struct NodeInfo {
  std::string_view name;
  uint32_t id = 0;        // index in the snapshot
  uint16_t zone = 0;      // interned zone id; 0 = the node has no zone label
  uint16_t gpuModel = 0;  // interned GPU model id; 0 = no GPU model known
  std::string_view zoneName;
  std::string_view gpuModelName;  // e.g. "NVIDIA-A100-SXM4-80GB", "Tesla-T4", "V100M32"
  CapacityType capacityType = CapacityType::Unknown;
  bool unschedulable = false;

  int64_t allocMilliCpu = 0;
  int64_t allocMemory = 0;
  int64_t allocPods = 0;
  int64_t usedMilliCpu = 0;
  int64_t usedMemory = 0;
  int64_t usedPods = 0;

  // Per-GPU accounting for the primary GPU resource. gpuCount is the node's allocatable GPUs
  // (capped at kMaxGpusPerNode); gpuUsedMilli[i] is how much of GPU i is taken (0..1000).
  int32_t gpuMemoryMiB = 0;  // memory per GPU; 0 when unknown
  uint8_t gpuCount = 0;
  std::array<uint16_t, kMaxGpusPerNode> gpuUsedMilli{};

  // Shapes of the GPU pods on the node, for policies that cluster like with like: bit 0 = a
  // shared-GPU pod (one GPU, less than 1000 milli), bit k = a pod with k whole GPUs.
  uint32_t gpuPodShapes = 0;

  uint8_t scalarCount = 0;
  std::array<ScalarResource, kMaxScalarsPerNode> scalars{};

  // Cold data for selectors and messages; empty when the builder has none (replay). Views over
  // codec vectors (assign a pointer to one) or the cache's compact string ids.
  NodeLabels labels;
  NodeTaints taints;

  const ScalarResource* scalar(std::string_view resource) const {
    for (uint8_t i = 0; i < scalarCount; ++i) {
      if (scalars[i].name == resource) return &scalars[i];
    }
    return nullptr;
  }
  int32_t gpuFreeMilli(int i) const { return kMilliPerGpu - gpuUsedMilli[i]; }
};

// What the pipeline derives from a Pod once per scheduling cycle (see derivePodInfo).
struct PodInfo {
  const codec::Pod* pod = nullptr;  // the source object; valid for the whole cycle
  int64_t milliCpu = 0;
  int64_t memory = 0;
  // GPU demand: gpuCount devices of gpuResource, each taking gpuMilli (1000 = whole GPU;
  // less than 1000 only with gpuCount == 1, a shared GPU).
  std::string_view gpuResource;
  int32_t gpuCount = 0;
  int32_t gpuMilli = 0;
  int64_t gpuTotalMilli() const { return int64_t{gpuCount} * gpuMilli; }
  bool wantsGpu() const { return gpuCount > 0; }
};

enum class Code : uint8_t { Success, Unschedulable, UnschedulableAndUnresolvable, Error };

struct Status {
  Code code = Code::Success;
  std::string_view reason;
  bool ok() const { return code == Code::Success; }
};

// The GPUs picked on a node for one pod, and how much of each it takes.
struct GpuAssignment {
  uint8_t count = 0;
  std::array<uint8_t, kMaxGpusPerNode> index{};
  int32_t milliEach = 0;
};

// Per-pod scratch: the derived PodInfo, one slot per plugin, and an arena for failure reasons.
class PluginState {
 public:
  virtual ~PluginState() = default;
};

class CycleState {
 public:
  static constexpr int kMaxPlugins = 16;

  PodInfo pod;

  // Starts a new cycle with this object: drops the previous pod and its reasons but keeps the
  // plugin slots, so a per-thread CycleState reused across pods stops allocating. Plugins that
  // find their slot already filled re-initialise it (checking its type: a CycleState may move
  // between profiles).
  void reset() {
    pod = PodInfo{};
    reasons_.clear();
  }

  PluginState* slot(int pluginIndex) const { return slots_[pluginIndex].get(); }
  void setSlot(int pluginIndex, std::unique_ptr<PluginState> s) { slots_[pluginIndex] = std::move(s); }

  // Stores a formatted reason for the life of the cycle and returns a view of it.
  std::string_view keep(std::string s) const {
    reasons_.push_back(std::move(s));
    return reasons_.back();
  }

 private:
  std::array<std::unique_ptr<PluginState>, kMaxPlugins> slots_{};
  mutable std::deque<std::string> reasons_;
};

// Read-only cluster facts beyond single nodes, for plugins that need them.
class ClusterState {
 public:
  virtual ~ClusterState() = default;
  // Number of zone ids in use (ids run 1..zoneCount-1; 0 is "no zone").
  virtual uint32_t zoneCount() const = 0;
  // Adds, per zone id, the pods of `workload` the engine knows about (bound or reserved).
  virtual void workloadZoneCounts(std::string_view workload, std::span<uint32_t> perZone) const = 0;
};

using NodeSpan = std::span<const NodeInfo* const>;
struct NodeBatch;  // plugins/node_columns.h

// A filter's verdict on one node: kPass, or the code FailureCodes gave its failure.
using Verdict = uint32_t;
constexpr Verdict kPass = 0;

// The distinct failures of one filter run, numbered from 1: a node's verdict names its Status.
// Statuses are equal when their codes and reasons' bytes are. Failures come in runs, so a code
// is looked for among the newest few first; past those, in an index (built only once a run has
// that many distinct failures: most never do, and their passing path does not allocate).
class FailureCodes {
 public:
  // Forgets every code; a plugin's own memo of codes (see epoch()) goes stale with it.
  void clear() {
    statuses_.clear();
    for (auto& byReason : index_) byReason.clear();
    ++epoch_;
  }
  // The code for failure `s`.
  Verdict code(const Status& s) {
    const size_t n = statuses_.size();
    for (size_t k = n; k-- > (n > kRecent ? n - kRecent : 0);) {
      const Status& e = statuses_[k];
      if (e.code == s.code && e.reason.size() == s.reason.size() &&
          (e.reason.data() == s.reason.data() || e.reason == s.reason)) {
        return static_cast<Verdict>(k + 1);
      }
    }
    auto& byReason = index_[static_cast<size_t>(s.code)];
    if (n > kRecent) {
      if (auto it = byReason.find(s.reason); it != byReason.end()) return it->second;
    }
    statuses_.push_back(s);
    if (n == kRecent) {  // the index starts: every failure so far
      for (size_t k = 0; k <= n; ++k) index_[static_cast<size_t>(statuses_[k].code)].emplace(statuses_[k].reason, k + 1);
    } else if (n > kRecent) {
      byReason.emplace(s.reason, static_cast<Verdict>(n + 1));
    }
    return static_cast<Verdict>(n + 1);
  }
  const Status& status(Verdict code) const { return statuses_[code - 1]; }
  size_t size() const { return statuses_.size(); }
  // Changes with every clear(): plugins that memo codes per cycle compare it.
  uint64_t epoch() const { return epoch_; }

 private:
  static constexpr size_t kRecent = 16;
  std::vector<Status> statuses_;
  std::array<std::unordered_map<std::string_view, Verdict>, 4> index_;  // by Code, then reason
  uint64_t epoch_ = 1;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;

  // Which extension points the plugin implements; the pipeline skips the others.
  virtual bool filters() const { return false; }
  virtual bool scores() const { return false; }

  // Once per pod, before Filter. `index` is the plugin's slot in the CycleState. A non-success
  // status rejects every node with that status.
  virtual Status preFilter(CycleState& state, const ClusterState& cluster, int index) const {
    (void)state, (void)cluster, (void)index;
    return {};
  }

  // Judges each node i whose verdict[i] is kPass on entry: leaves it when the node passes, else
  // sets failures.code(its Status). Entries already failed (by an earlier plugin) stay as they
  // are: a node keeps its first failure.
  virtual void filter(const CycleState& state, int index, const NodeBatch& nodes, std::span<Verdict> verdict,
                      FailureCodes& failures) const {
    (void)state, (void)index, (void)nodes, (void)verdict, (void)failures;
  }

  // Once per pod, over the feasible nodes, before Score.
  virtual void preScore(CycleState& state, const ClusterState& cluster, int index, const NodeBatch& nodes) const {
    (void)state, (void)cluster, (void)index, (void)nodes;
  }

  // Writes a 0..kMaxNodeScore score for each node (out[i] is 0 on entry).
  virtual void score(const CycleState& state, int index, const NodeBatch& nodes, std::span<int32_t> out) const {
    (void)state, (void)index, (void)nodes, (void)out;
  }

  // Rescales this plugin's scores across the feasible nodes (scores[i] is nodes[i]'s), still
  // within 0..kMaxNodeScore.
  virtual void normalizeScore(const CycleState& state, int index, const NodeBatch& nodes,
                              std::span<int32_t> scores) const {
    (void)state, (void)index, (void)nodes, (void)scores;
  }

  // GPU selection at Reserve: which GPUs of `node` the pod gets. Returns false when this
  // plugin does not choose GPUs (the pipeline then asks the next one, ending with best fit).
  virtual bool selectGpus(const CycleState& state, int index, const NodeInfo& node, GpuAssignment& out) const {
    (void)state, (void)index, (void)node, (void)out;
    return false;
  }
};

}  // namespace fleetsched::plugins
