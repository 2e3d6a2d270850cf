// How fleetsched reads Kubernetes objects: one module for the cache, the plugins, the extender and
// replay, so a setting cannot mean one thing to a plugin and another to the cache that feeds it.
//
//   pods   which requests are GPUs (GpuResourceConfig, derivePodInfo); fleetsched's annotations
//          fleetsched.io/gpu-milli and fleetsched.io/gpu-index; the workload key the Zone plugin
//          counts pods under (workloadKey).
//   nodes  which allocatable resources are GPUs and which one has per-GPU accounting (the primary
//          resource); the labels naming a node's zone, GPU model, GPU memory and capacity type.
//
// An Interpretation holds these settings for a whole configuration. plugins::Config derives it
// from its validated profiles (interpretProfiles: the GPU plugin's resourceNames and productLabel,
// the Zone plugin's workloadLabels) and whoever builds the cache passes Config::interpretation().
// A default-constructed Interpretation is the reading without a profile (tests, benchmarks).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model.h"
#include "plugins/framework.h"

namespace fleetsched::plugins {

constexpr std::string_view kDefaultProfileName = "default";
// Defaults of the GPU and Zone plugins' args, and so of the cache's reading.
constexpr std::string_view kDefaultGpuResource = "nvidia.com/gpu";
constexpr std::string_view kDefaultGpuProductLabel = "nvidia.com/gpu.product";
constexpr std::string_view kDefaultWorkloadLabel = "fleetsched.io/workload";

// ---- pods ----------------------------------------------------------------------------------------

// GPU resources are matched in the configured order: an entry is either an exact resource name
// ("nvidia.com/gpu") or, when it ends in '-' or '/', a prefix ("nvidia.com/mig-"). Per-GPU
// accounting (NodeInfo::gpuCount and gpuUsedMilli) describes the primary resource: the first
// exact name in the list.
struct GpuResourceConfig {
  std::vector<std::string> resourceNames{std::string(kDefaultGpuResource)};

  // The first exact (non-prefix) name, or empty when every entry is a prefix.
  std::string_view primary() const;
  // True when some entry matches `resource`.
  bool counts(std::string_view resource) const;
  // True when `resource` matches entry `name` (exactly, or by prefix for prefix entries).
  static bool matches(std::string_view name, std::string_view resource);
  static bool isPrefix(std::string_view name) {
    return !name.empty() && (name.back() == '-' || name.back() == '/');
  }
};

// What a pod asks for, read once per scheduling cycle from its effective requests and
// fleetsched's annotations: fills `out` (pod, cpu, memory, GPU demand; the first entry of
// `config` the pod requests a positive amount of wins) and returns Success, or returns
// UnschedulableAndUnresolvable with a constant reason when fleetsched.io/gpu-milli is invalid
// (gpuMilliAnnotation) or set on a pod that does not request exactly one GPU. Never allocates.
Status derivePodInfo(const codec::Pod& pod, const GpuResourceConfig& config, PodInfo& out);

// fleetsched.io/gpu-milli, a pod's share of one GPU: 0 when absent, 1..1000 when valid, -1 when
// set to anything else. Scheduling rejects an invalid value (derivePodInfo); accounting charges
// such a pod a whole GPU, as the device plugin would give it one.
int32_t gpuMilliAnnotation(const codec::Pod& pod);

// fleetsched.io/gpu-index, written by the binder: the GPUs a pod was given, dash-separated
// ("0-1-3"). parseGpuIndex reads it into a bit mask (false and mask 0 when malformed or an index
// is kMaxGpusPerNode or more); gpuIndexAnnotation reads the pod's (false and mask 0 when absent or
// malformed); formatGpuIndex writes what parseGpuIndex reads.
bool parseGpuIndex(std::string_view s, uint16_t& mask);
bool gpuIndexAnnotation(const codec::Pod& pod, uint16_t& mask);
std::string formatGpuIndex(const GpuAssignment& gpus);

// The workload a pod belongs to, as the Zone plugin asks ClusterState::workloadZoneCounts about it
// and the cache counts bound pods: "<namespace>/<ownerKind>/<ownerName>" from the controller owner
// reference (a ReplicaSet's name as is), else "<namespace>/label/<value>" from the first of
// `labels` the pod carries with a non-empty value. Writes the key into `out` (reusing its
// capacity) and returns false when the pod has none.
bool workloadKey(const codec::Pod& pod, std::span<const std::string> labels, std::string& out);

// Parses a strictly decimal, non-negative integer ("250"); false on anything else or overflow.
bool parseDecimal(std::string_view s, int64_t& out);

// ---- nodes ---------------------------------------------------------------------------------------

struct CapacityLabelRule {
  std::string label;
  std::string value;  // compared case-insensitively
  CapacityType type = CapacityType::Unknown;
};

// The capacity-type labels of EKS, Karpenter, GKE and AKS; the first label of the table present on
// a node decides:
//   eks.amazonaws.com/capacityType          SPOT → Spot, ON_DEMAND → OnDemand, CAPACITY_BLOCK → Reserved
//   karpenter.sh/capacity-type              spot → Spot, on-demand → OnDemand, reserved → Reserved
//   cloud.google.com/gke-spot               true → Spot
//   cloud.google.com/gke-preemptible        true → Spot
//   kubernetes.azure.com/scalesetpriority   spot → Spot, regular → OnDemand
std::vector<CapacityLabelRule> defaultCapacityRules();

// Parses a per-GPU memory label into MiB: a plain integer is MiB; a quantity with a binary or
// decimal suffix (Ki, Mi, Gi, Ti, K, M, G, T) is converted. Returns 0 when unparsable.
int32_t parseGpuMemoryMiB(std::string_view value);

// Which of `count` profiles (profile i named nameOf(i)) schedules pods whose spec.schedulerName is
// `schedulerName`: the one named so, else "default", else the first. Config::profileFor and the
// cache's workload keys both pick with it.
template <class NameOf>
size_t profileIndexFor(std::string_view schedulerName, size_t count, NameOf nameOf) {
  size_t fallback = 0;
  bool haveDefault = false;
  for (size_t i = 0; i < count; ++i) {
    const std::string_view name = nameOf(i);
    if (name == schedulerName) return i;
    if (!haveDefault && name == kDefaultProfileName) {
      fallback = i;
      haveDefault = true;
    }
  }
  return fallback;
}

// How the pods of one profile are read (profileIndexFor says which profile a pod belongs to).
struct ProfileReading {
  std::string profile;
  std::vector<std::string> workloadLabels{std::string(kDefaultWorkloadLabel)};  // the Zone plugin's
};

struct Interpretation {
  // Resources that count as GPUs on nodes and in pods' charges; per-GPU accounting applies to
  // gpuResources.primary() only. Without a profile NVIDIA MIG profiles are charged too, as their
  // counts cost nothing and some profile may judge them.
  GpuResourceConfig gpuResources{{std::string(kDefaultGpuResource), "nvidia.com/mig-"}};
  std::string gpuProductLabel{kDefaultGpuProductLabel};  // GPU model (GPU feature discovery)
  // Memory per GPU: GFD's integer MB (taken as MiB), else the seed's MiB or quantity label.
  std::vector<std::string> gpuMemoryLabels{"nvidia.com/gpu.memory", "gpu.nvidia.com/memory"};
  std::vector<std::string> zoneLabels{"topology.kubernetes.io/zone",
                                      "failure-domain.beta.kubernetes.io/zone"};
  std::vector<CapacityLabelRule> capacityRules = defaultCapacityRules();
  // One entry per profile, in the configuration's order.
  std::vector<ProfileReading> profiles{ProfileReading{std::string(kDefaultProfileName)}};

  bool isGpuResource(std::string_view resource) const { return gpuResources.counts(resource); }
  // From a node's labels: the first zone label with a value (empty: none), the GPU model (empty:
  // unknown), memory per GPU in MiB (0: unknown), and the capacity type (Unknown: no rule's label).
  std::string_view zone(const std::vector<codec::KeyValue>& labels) const;
  std::string_view gpuModel(const std::vector<codec::KeyValue>& labels) const;
  int32_t gpuMemoryMiB(const std::vector<codec::KeyValue>& labels) const;
  CapacityType capacityType(const std::vector<codec::KeyValue>& labels) const;

  // The index in `profiles` of the profile that schedules pods of `schedulerName`.
  size_t profileIndex(std::string_view schedulerName) const;
  // workloadKey with the workload labels of the pod's profile.
  bool workloadKey(const codec::Pod& pod, std::string& out) const;
};

// ---- from profiles -------------------------------------------------------------------------------

// What one profile's plugin args say about reading objects.
struct ProfileSettings {
  std::string name;
  bool hasGpuPlugin = false;
  GpuResourceConfig gpuResources;  // the GPU plugin's resourceNames
  std::string gpuProductLabel{kDefaultGpuProductLabel};
  std::vector<std::string> workloadLabels{std::string(kDefaultWorkloadLabel)};  // the Zone plugin's
};

// The Interpretation of a configuration of `profiles` (in order). The cache keeps one record per
// node for every profile, so node-side settings are merged, and where they cannot be merged the
// profiles must agree:
//   - GPU resources: the union of every profile's resourceNames (first seen first), so whatever
//     any profile counts as a GPU is charged and seen;
//   - the per-GPU (primary) resource: a node has one per-GPU ledger, so every profile that names
//     one must name the same; a profile without the GPU plugin counts that resource as its GPU
//     (written into its gpuResources; nvidia.com/gpu when no profile names one);
//   - productLabel: a node has one GPU model, so every profile with the GPU plugin must agree;
//   - workloadLabels: per profile; a pod is counted under the key its own profile's Zone plugin
//     asks about (ProfileReading).
// Returns false with `error` set to one line naming the profile that disagrees.
bool interpretProfiles(std::span<ProfileSettings> profiles, Interpretation& out, std::string& error);

}  // namespace fleetsched::plugins
