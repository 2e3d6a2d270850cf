// The simulated cluster of a replay: one plugins::NodeInfo per trace node, kept exactly as the
// cache keeps live nodes (CPU, memory, pod count, per-GPU used milli, GPU pod shapes), plus the
// node-name order the tie-break uses, and a row per node (plugins/node_columns.h) for the default
// GPU resource, kept with the records. Reserve charges a placed pod; nothing is ever released
// (trace pods never finish in the published evaluation).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plugins/framework.h"
#include "plugins/node_columns.h"
#include "replay/trace.h"

namespace fleetsched::replay {

// Every node accepts at most this many pods, as in the published evaluation.
constexpr int64_t kPodsPerNode = 1001;
// The one GPU resource the trace speaks of.
constexpr std::string_view kGpuResource = "nvidia.com/gpu";

class Cluster final : public plugins::ClusterState {
 public:
  // names[i] is the (prefixed) name node rows[i] gets.
  Cluster(const std::vector<NodeRow>& rows, std::vector<std::string> names);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  size_t size() const { return nodes_.size(); }
  const plugins::NodeInfo& node(uint32_t id) const { return nodes_[id]; }
  plugins::NodeSpan nodes() const { return ptrs_; }
  // Every node with its row (row id = node id).
  plugins::NodeBatch batch() const { return {ptrs_, ids_, &rows_}; }
  // Position of the node's name in ascending name order (the published tie-break).
  uint32_t nameRank(uint32_t id) const { return rank_[id]; }

  void reserve(uint32_t id, const plugins::PodInfo& pod, const plugins::GpuAssignment& gpus);

  int64_t gpuCapacityMilli() const { return capacityMilli_; }
  int64_t gpuUsedMilli() const { return usedMilli_; }
  // GPUs with any share taken (the "Gpu" line of the reference report).
  int64_t gpusTouched() const;

  uint32_t zoneCount() const override { return 1; }
  void workloadZoneCounts(std::string_view, std::span<uint32_t>) const override {}

 private:
  std::vector<std::string> names_;
  std::vector<std::string> models_;
  std::vector<plugins::NodeInfo> nodes_;
  std::vector<const plugins::NodeInfo*> ptrs_;
  std::vector<uint32_t> ids_;
  plugins::NodeColumns rows_;
  std::vector<uint32_t> rank_;
  int64_t capacityMilli_ = 0;
  int64_t usedMilli_ = 0;
};

}  // namespace fleetsched::replay
