#include "cache/node_builder.h"

#include <algorithm>
#include <charconv>

namespace fleetsched::cache {

using plugins::CapacityType;

std::vector<CapacityLabelRule> NodeFeatureConfig::defaultCapacityRules() {
  return {
      {"eks.amazonaws.com/capacityType", "SPOT", CapacityType::Spot},
      {"eks.amazonaws.com/capacityType", "ON_DEMAND", CapacityType::OnDemand},
      {"eks.amazonaws.com/capacityType", "CAPACITY_BLOCK", CapacityType::Reserved},
      {"karpenter.sh/capacity-type", "spot", CapacityType::Spot},
      {"karpenter.sh/capacity-type", "on-demand", CapacityType::OnDemand},
      {"karpenter.sh/capacity-type", "reserved", CapacityType::Reserved},
      {"cloud.google.com/gke-spot", "true", CapacityType::Spot},
      {"cloud.google.com/gke-preemptible", "true", CapacityType::Spot},
      {"kubernetes.azure.com/scalesetpriority", "spot", CapacityType::Spot},
      {"kubernetes.azure.com/scalesetpriority", "regular", CapacityType::OnDemand},
  };
}

bool NodeFeatureConfig::isGpuResource(std::string_view name) const {
  for (const auto& n : gpuResourceNames) {
    if (name == n) return true;
  }
  for (const auto& p : gpuResourcePrefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

CapacityType capacityTypeOf(const NodeFeatureConfig& config, const std::vector<codec::KeyValue>& labels) {
  // Rules are grouped by label in table order; the first label present decides, so a node with
  // an unrecognised value of an earlier label does not fall through to a later provider's label.
  std::string_view decidedLabel;
  for (const auto& rule : config.capacityRules) {
    if (!decidedLabel.empty() && rule.label != decidedLabel) break;
    const std::string_view* v = codec::findKey(labels, rule.label);
    if (v == nullptr) continue;
    decidedLabel = rule.label;
    if (equalsIgnoreCase(*v, rule.value)) return rule.type;
  }
  return CapacityType::Unknown;
}

int32_t parseGpuMemoryMiB(std::string_view value) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || n < 0) return 0;
  std::string_view suffix(p, value.data() + value.size() - p);
  // Result in bytes for suffixed values, then to MiB.
  int64_t mib = 0;
  constexpr int64_t kMiB = 1 << 20;
  if (suffix.empty()) {
    mib = n;
  } else if (suffix == "Ki") {
    mib = n / 1024;
  } else if (suffix == "Mi") {
    mib = n;
  } else if (suffix == "Gi") {
    mib = n * 1024;
  } else if (suffix == "Ti") {
    mib = n * 1024 * 1024;
  } else if (suffix == "K" || suffix == "k" || suffix == "KB") {
    mib = n * 1000 / kMiB;
  } else if (suffix == "M" || suffix == "MB") {
    mib = n * 1000 * 1000 / kMiB;
  } else if (suffix == "G" || suffix == "GB") {
    mib = n * 1000 * 1000 * 1000 / kMiB;
  } else if (suffix == "T" || suffix == "TB") {
    mib = n * 1000 * 1000 * 1000 * 1000 / kMiB;
  } else {
    return 0;
  }
  return static_cast<int32_t>(std::min<int64_t>(mib, INT32_MAX));
}

NodeBuilder::NodeBuilder(NodeFeatureConfig config) : config_(std::move(config)) {}

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

  for (const auto& label : config_.zoneLabels) {
    if (const auto* v = codec::findKey(node.labels, label); v != nullptr && !v->empty()) {
      out.zone = internZoneId(*v);
      out.zoneName = zones_.name(out.zone);
      break;
    }
  }
  if (const auto* v = codec::findKey(node.labels, config_.gpuProductLabel); v != nullptr && !v->empty()) {
    const uint32_t id = models_.intern(*v);
    out.gpuModel = id > UINT16_MAX ? 0 : static_cast<uint16_t>(id);
    out.gpuModelName = models_.name(id);
  }
  for (const auto& label : config_.gpuMemoryLabels) {
    if (const auto* v = codec::findKey(node.labels, label); v != nullptr) {
      out.gpuMemoryMiB = parseGpuMemoryMiB(*v);
      if (out.gpuMemoryMiB > 0) break;
    }
  }
  out.capacityType = capacityTypeOf(config_, node.labels);

  // The per-GPU resource: the first configured exact name the node offers.
  std::string_view primary;
  for (const auto& name : config_.gpuResourceNames) {
    const int64_t n = node.allocatable.get(name);
    if (n > 0) {
      primary = internResource(name);
      out.gpuCount = static_cast<uint8_t>(std::min<int64_t>(n, plugins::kMaxGpusPerNode));
      out.scalars[out.scalarCount++] = {primary, n, 0};
      break;
    }
  }
  for (const auto& r : node.allocatable.scalar) {
    if (out.scalarCount == plugins::kMaxScalarsPerNode) break;
    if (r.value <= 0 || !config_.isGpuResource(r.name)) continue;
    if (!primary.empty() && r.name == primary) continue;
    out.scalars[out.scalarCount++] = {internResource(r.name), r.value, 0};
  }
  return primary;
}

}  // namespace fleetsched::cache
