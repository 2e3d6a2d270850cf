// Deterministic, seeded generators of EKS-like GPU fleets and pod mixes, written as the JSON
// Kubernetes and kube-scheduler actually produce: `kubectl get nodes -o json` list files and
// ExtenderArgs request bodies in both extender modes. Every node and pod is derived from
// (seed, index) alone, so the same options always give byte-identical output, objects can be
// produced one at a time (a 15,000-node file is streamed, never held whole), and the load
// generator can rebuild the exact corpus `gen-fleet` wrote from the options alone.
//
// Node shapes follow real AWS instance types (p4d/p4de A100, p5 H100, g6 L4, g5 A10G, g4dn T4,
// m6i/c6i/r6i CPU-only) with GPU feature discovery labels, both capacity-type label families
// (EKS managed node groups and Karpenter) and three zones. Sizes: each node's compact wire form
// is padded with container images (as kubelet reports them) to a seeded target between
// FleetOptions::minNodeBytes and maxNodeBytes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tools/fleet/json_value.h"

namespace fleetsched::tools::fleet {

// The seed extender's per-GPU memory label (MiB, like nvidia.com/gpu.memory). The Go peers
// score by it, so every GPU node carries it.
inline constexpr std::string_view kSeedGpuMemoryLabel = "gpu.nvidia.com/memory";

struct GpuModel {
  std::string_view name;     // short: "A100-40GB"
  std::string_view product;  // nvidia.com/gpu.product
  std::string_view family;   // nvidia.com/gpu.family
  int memoryMb;              // nvidia.com/gpu.memory (per GPU)
  int computeMajor;
  int computeMinor;
  bool migCapable;
};

enum class CapacityType : uint8_t { kOnDemand, kSpot };

struct NodeSummary {
  std::string name;
  std::string instanceType;
  std::string zone;
  CapacityType capacityType = CapacityType::kOnDemand;
  const GpuModel* gpu = nullptr;  // nullptr: CPU-only node
  int gpuCount = 0;
  int64_t allocatableMilliCpu = 0;
  int64_t allocatableMemory = 0;  // bytes
  int maxPods = 0;
  bool karpenter = false;     // provisioned by Karpenter (else an EKS managed node group)
  bool gpuTainted = false;    // nvidia.com/gpu=true:NoSchedule
  bool unschedulable = false;  // cordoned
  bool ready = true;
};

struct FleetOptions {
  size_t nodes = 1000;
  uint64_t seed = 1;
  double cpuOnlyFraction = 0.2;
  std::string region = "us-west-2";
  int zones = 3;
  size_t minNodeBytes = 10 * 1024;  // compact wire size targets per node
  size_t maxNodeBytes = 14 * 1024;
};

class FleetGenerator {
 public:
  explicit FleetGenerator(FleetOptions options);

  const FleetOptions& options() const { return options_; }
  size_t size() const { return summaries_.size(); }
  const NodeSummary& summary(size_t i) const { return summaries_[i]; }
  const std::vector<NodeSummary>& summaries() const { return summaries_; }

  // The full v1.Node. withTypeMeta adds kind/apiVersion, as list files carry them and the
  // NodeList kube-scheduler builds in memory does not.
  JsonValue nodeObject(size_t i, bool withTypeMeta) const;
  // Compact, struct-ordered, no TypeMeta: one item of ExtenderArgs.Nodes.items.
  std::string nodeWire(size_t i) const;

 private:
  FleetOptions options_;
  std::vector<NodeSummary> summaries_;
};

enum class PodKind : uint8_t { kCpuOnly, kGpu1, kGpu2, kGpu4, kGpu8, kGpuShare };
std::string_view podKindName(PodKind kind);

struct PodSummary {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string workload;  // owning ReplicaSet's name
  PodKind kind = PodKind::kCpuOnly;
  int gpus = 0;          // nvidia.com/gpu requested
  int gpuMilli = 0;      // fleetsched.io/gpu-milli share (kGpuShare), else 0
  bool spotTolerant = false;
  bool zoneSpread = false;
  int64_t milliCpu = 0;
  int64_t memory = 0;    // bytes
  std::string nodeName;  // set for bound pods
};

struct PodOptions {
  size_t pods = 1000;
  uint64_t seed = 1;
  // Relative weights of the mix (need not sum to anything).
  double weightCpuOnly = 30, weightGpu1 = 25, weightGpu2 = 12, weightGpu4 = 10, weightGpu8 = 6,
         weightGpuShare = 5;
  double spotTolerantFraction = 0.3;  // of GPU workloads
  double zoneSpreadFraction = 0.25;   // of workloads
  std::string namePrefix;             // distinguishes pod sets drawn from one seed ("bound-")
};

class PodGenerator {
 public:
  explicit PodGenerator(PodOptions options);

  size_t size() const { return summaries_.size(); }
  const PodSummary& summary(size_t i) const { return summaries_[i]; }

  // Places every pod that fits on a node of `fleet` (first fit from a seeded start, honouring
  // GPU count, CPU, memory, pods, the GPU taint and spot tolerance) and marks it bound and
  // Running. Returns how many pods were placed; the rest stay pending.
  size_t bindToFleet(const FleetGenerator& fleet);

  // The apiserver-defaulted v1.Pod (status Pending, or Running when bound).
  JsonValue podObject(size_t i, bool withTypeMeta) const;
  std::string podWire(size_t i) const;

 private:
  PodOptions options_;
  std::vector<PodSummary> summaries_;
};

// {"apiVersion":"v1","items":[...],"kind":"List","metadata":{"resourceVersion":""}} streamed to
// `out`. kKubectl style matches `kubectl get -o json` byte for byte in layout; kSorted and kWire
// are compact. Returns false on a write error.
bool writeNodeList(std::FILE* out, const FleetGenerator& fleet, JsonValue::Style style);
bool writePodList(std::FILE* out, const PodGenerator& pods, JsonValue::Style style,
                  bool onlyBound = false);

// ExtenderArgs as kube-scheduler's json.Marshal sends them (compact, PascalCase envelope).
void appendNodeNamesArgs(std::string& out, std::string_view podWire,
                         std::span<const std::string> nodeNames);
void appendFullNodesArgs(std::string& out, std::string_view podWire,
                         std::span<const std::string> nodeWires);
// The two halves of a full-mode body around the pod, for senders that share the (large) node
// part between requests: body = kFullArgsHead + pod + fullArgsTail(nodes).
inline constexpr std::string_view kFullArgsHead = R"({"Pod":)";
std::string fullArgsTail(std::span<const std::string> nodeWires);
inline constexpr std::string_view kNodeNamesArgsHead = R"({"Pod":)";
std::string nodeNamesArgsTail(std::span<const std::string> nodeNames);

}  // namespace fleetsched::tools::fleet
