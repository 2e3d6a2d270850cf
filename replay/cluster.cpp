#include "replay/cluster.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "plugins/interpretation.h"
#include "plugins/policies/policy_common.h"

namespace fleetsched::replay {

Cluster::Cluster(const std::vector<NodeRow>& rows, std::vector<std::string> names) : names_(std::move(names)) {
  assert(names_.size() == rows.size());
  // Intern the model names first: NodeInfo keeps views into models_, which must not move.
  for (const auto& r : rows) {
    if (std::find(models_.begin(), models_.end(), r.gpuModel) == models_.end()) models_.push_back(r.gpuModel);
  }
  nodes_.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const NodeRow& r = rows[i];
    plugins::NodeInfo& n = nodes_[i];
    const auto model = std::find(models_.begin(), models_.end(), r.gpuModel);
    n.name = names_[i];
    n.id = static_cast<uint32_t>(i);
    n.gpuModelName = *model;
    n.gpuModel = r.gpuModel.empty() ? 0 : static_cast<uint16_t>(model - models_.begin() + 1);
    n.allocMilliCpu = r.milliCpu;
    n.allocMemory = r.memoryMiB << 20;
    n.allocPods = kPodsPerNode;
    n.gpuCount = static_cast<uint8_t>(r.gpuCount);
    n.scalarCount = 1;
    n.scalars[0] = {kGpuResource, r.gpuCount, 0};
    capacityMilli_ += int64_t{r.gpuCount} * plugins::kMilliPerGpu;
  }
  rows_.reset(0, plugins::GpuResourceConfig{});
  for (const auto& n : nodes_) {
    ptrs_.push_back(&n);
    ids_.push_back(n.id);
    rows_.set(n.id, n);
  }
  std::vector<uint32_t> order(nodes_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return names_[a] < names_[b]; });
  rank_.resize(order.size());
  for (uint32_t pos = 0; pos < order.size(); ++pos) rank_[order[pos]] = pos;
}

void Cluster::reserve(uint32_t id, const plugins::PodInfo& pod, const plugins::GpuAssignment& gpus) {
  plugins::NodeInfo& n = nodes_[id];
  n.usedMilliCpu += pod.milliCpu;
  n.usedMemory += pod.memory;
  n.usedPods += 1;
  for (int i = 0; i < gpus.count; ++i) {
    const int g = gpus.index[i];
    const bool wasFree = n.gpuUsedMilli[g] == 0;
    n.gpuUsedMilli[g] = static_cast<uint16_t>(n.gpuUsedMilli[g] + gpus.milliEach);
    assert(n.gpuUsedMilli[g] <= plugins::kMilliPerGpu);
    n.scalars[0].used += wasFree;  // devices in use, as a device plugin would count them
    usedMilli_ += gpus.milliEach;
  }
  n.gpuPodShapes |= plugins::policies::gpuPodShapeBit(pod);
  rows_.set(id, n);
}

int64_t Cluster::gpusTouched() const {
  int64_t touched = 0;
  for (const auto& n : nodes_) {
    for (int i = 0; i < n.gpuCount; ++i) touched += n.gpuUsedMilli[i] > 0;
  }
  return touched;
}

}  // namespace fleetsched::replay
