// The plugin API, modelled on the Kubernetes scheduling framework and limited to the extension
// points an extender serves: PreFilter, Filter, PreScore, Score, NormalizeScore, plus GPU
// selection at Reserve for the binder and replay, and a preemption check.
//
// Plugins see plain structs (PodInfo, NodeInfo) and a read-only ClusterState, never JSON or
// sockets. Plugins are immutable after creation and shared by every request; per-pod state
// lives in CycleState. Filter and Score take a batch of nodes so their loops run over
// contiguous data; a reason is a constant string or is formatted into the CycleState arena
// (only for failures, so the passing path never allocates).
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

  // Writes a verdict for each node; out[i] is Success on entry and is left alone for nodes
  // that pass.
  virtual void filter(const CycleState& state, int index, NodeSpan nodes, std::span<Status> out) const {
    (void)state, (void)index, (void)nodes, (void)out;
  }

  // Once per pod, over the feasible nodes, before Score.
  virtual void preScore(CycleState& state, const ClusterState& cluster, int index, NodeSpan nodes) const {
    (void)state, (void)cluster, (void)index, (void)nodes;
  }

  // Writes a 0..kMaxNodeScore score for each node.
  virtual void score(const CycleState& state, int index, NodeSpan nodes, std::span<int32_t> out) const {
    (void)state, (void)index, (void)nodes, (void)out;
  }

  // Rescales this plugin's scores across the feasible nodes (scores[i] is nodes[i]'s), still
  // within 0..kMaxNodeScore.
  virtual void normalizeScore(const CycleState& state, int index, NodeSpan nodes, std::span<int32_t> scores) const {
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
