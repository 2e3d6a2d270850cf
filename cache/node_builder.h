// Turns a codec::Node into the hot plugins::NodeInfo record.
//
// NodeFeatureConfig says which labels and resources mean what. Defaults:
//   GPU resources   exact "nvidia.com/gpu" (the first exact name a node has allocatable is its
//                   per-GPU resource: gpuCount and gpuUsedMilli track it), prefix "nvidia.com/mig-"
//                   (MIG profiles under the mixed strategy; tracked as scalars only).
//   GPU model       label "nvidia.com/gpu.product" (GPU feature discovery).
//   GPU memory      label "nvidia.com/gpu.memory" (GFD, integer MB, taken as MiB), else the seed's
//                   "gpu.nvidia.com/memory" (integer MiB, or a quantity such as "80Gi").
//   Zone            label "topology.kubernetes.io/zone", else "failure-domain.beta.kubernetes.io/zone".
//   Capacity type   the first label of this table present on the node decides (values compared
//                   case-insensitively); no match → Unknown (the Spot plugin treats it as on-demand):
//     eks.amazonaws.com/capacityType          SPOT → Spot, ON_DEMAND → OnDemand, CAPACITY_BLOCK → Reserved
//     karpenter.sh/capacity-type              spot → Spot, on-demand → OnDemand, reserved → Reserved
//     cloud.google.com/gke-spot               true → Spot
//     cloud.google.com/gke-preemptible        true → Spot
//     kubernetes.azure.com/scalesetpriority   spot → Spot, regular → OnDemand
//
// NodeBuilder interns zone, model and resource names into small ids (views stay valid for the
// builder's life). It is not thread-safe: one builder per writer thread (the cache owns one).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cache/string_pool.h"
#include "codec/model.h"
#include "plugins/framework.h"

namespace fleetsched::cache {

struct CapacityLabelRule {
  std::string label;
  std::string value;  // compared case-insensitively
  plugins::CapacityType type = plugins::CapacityType::Unknown;
};

struct NodeFeatureConfig {
  std::vector<std::string> gpuResourceNames{"nvidia.com/gpu"};
  std::vector<std::string> gpuResourcePrefixes{"nvidia.com/mig-"};
  std::string gpuProductLabel = "nvidia.com/gpu.product";
  std::vector<std::string> gpuMemoryLabels{"nvidia.com/gpu.memory", "gpu.nvidia.com/memory"};
  std::vector<std::string> zoneLabels{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"};
  std::vector<CapacityLabelRule> capacityRules = defaultCapacityRules();
  // Workload key labels for zone counting, used when a pod has no controller owner: keys are
  // built by plugins::zone::workloadKey, the Zone plugin's own rule, and these must equal the
  // Zone plugin's `workloadLabels` arg.
  std::vector<std::string> workloadLabels{"fleetsched.io/workload"};

  static std::vector<CapacityLabelRule> defaultCapacityRules();
  bool isGpuResource(std::string_view name) const;
};

// The capacity type the rules give for `labels`.
plugins::CapacityType capacityTypeOf(const NodeFeatureConfig& config, const std::vector<codec::KeyValue>& labels);

// Parses a per-GPU memory label into MiB: a plain integer is MiB; a quantity with a binary or
// decimal suffix (Ki, Mi, Gi, Ti, K, M, G, T) is converted. Returns 0 when unparsable.
int32_t parseGpuMemoryMiB(std::string_view value);

class NodeBuilder {
 public:
  explicit NodeBuilder(NodeFeatureConfig config = {});

  const NodeFeatureConfig& config() const { return config_; }

  // Fills `out` from `node`: zone, model, capacity type, allocatable cpu/memory/pods, GPU count
  // and memory, and one scalar per configured GPU resource the node has (the per-GPU resource
  // first). Used amounts are zero. `out.name`, `labels` and `taints` view `node`; the caller
  // re-points them to storage it keeps. Returns the node's per-GPU resource name (interned) or
  // an empty view when it has none.
  std::string_view build(const codec::Node& node, plugins::NodeInfo& out);

  // Interned resource name (views stay valid for the builder's life).
  std::string_view internResource(std::string_view name) { return resources_.name(resources_.intern(name)); }
  // Number of zone ids in use, "no zone" (0) included.
  uint32_t zoneCount() const { return zones_.size(); }

 private:
  uint16_t internZoneId(std::string_view zone);

  NodeFeatureConfig config_;
  Interner zones_;
  Interner models_;
  Interner resources_;
};

}  // namespace fleetsched::cache
