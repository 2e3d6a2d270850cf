#include "cache/node_builder.h"

#include <algorithm>

namespace fleetsched::cache {

NodeBuilder::NodeBuilder(plugins::Interpretation interpretation)
    : interpretation_(std::move(interpretation)) {}

uint16_t NodeBuilder::internZoneId(std::string_view zone) {
  const uint32_t id = zones_.intern(zone);
  // Beyond 65,535 distinct zones every new one shares "no zone"; no real cluster gets close.
  return id > UINT16_MAX ? 0 : static_cast<uint16_t>(id);
}

std::string_view NodeBuilder::build(const codec::Node& node, plugins::NodeInfo& out) {
  out = plugins::NodeInfo{};
  out.name = node.name;
  out.labels = &node.labels;
  out.taints = &node.taints;
  out.unschedulable = node.unschedulable;
  out.allocMilliCpu = node.allocatable.milliCpu;
  out.allocMemory = node.allocatable.memory;
  out.allocPods = node.allocatable.pods;

  const plugins::Interpretation& in = interpretation_;
  if (const std::string_view zone = in.zone(node.labels); !zone.empty()) {
    out.zone = internZoneId(zone);
    out.zoneName = zones_.name(out.zone);
  }
  if (const std::string_view model = in.gpuModel(node.labels); !model.empty()) {
    const uint32_t id = models_.intern(model);
    out.gpuModel = id > UINT16_MAX ? 0 : static_cast<uint16_t>(id);
    out.gpuModelName = models_.name(id);
  }
  out.gpuMemoryMiB = in.gpuMemoryMiB(node.labels);
  out.capacityType = in.capacityType(node.labels);

  // Per-GPU accounting is for the primary resource only: the plugins of every profile take a
  // node's gpuCount to count that resource.
  std::string_view primary;
  if (const std::string_view name = in.gpuResources.primary(); !name.empty()) {
    if (const int64_t n = node.allocatable.get(name); n > 0) {
      primary = internResource(name);
      out.gpuCount = static_cast<uint8_t>(std::min<int64_t>(n, plugins::kMaxGpusPerNode));
      out.scalars[out.scalarCount++] = {primary, n, 0};
    }
  }
  for (const auto& r : node.allocatable.scalar) {
    if (out.scalarCount == plugins::kMaxScalarsPerNode) break;
    if (r.value <= 0 || !in.isGpuResource(r.name)) continue;
    if (!primary.empty() && r.name == primary) continue;
    out.scalars[out.scalarCount++] = {internResource(r.name), r.value, 0};
  }
  return primary;
}

}  // namespace fleetsched::cache
