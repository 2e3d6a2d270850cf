// Plain structs for the Kubernetes objects fleetsched reads: what the decoders produce and what
// the rest of the engine consumes. Every string_view points into the buffer the object was
// decoded from (a request body, a watch event, a file); whoever keeps data past that buffer's
// life copies it (the cache interns what it keeps).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace fleetsched::codec {

struct KeyValue {
  std::string_view key;
  std::string_view value;
};

// Returns the value of `key` in `kvs`, or nullptr. Label and annotation sets are small and
// read once per object, so a linear scan beats building a map.
inline const std::string_view* findKey(const std::vector<KeyValue>& kvs, std::string_view key) {
  for (const auto& kv : kvs) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

// One named resource amount. cpu is in milli-cores; every other resource is in whole units
// (bytes, counts), rounded up as Quantity.Value() does.
struct ResourceAmount {
  std::string_view name;
  int64_t value = 0;
};

// A resource list as kube-scheduler charges it. The four standard resources have fields; the
// rest (nvidia.com/gpu, nvidia.com/mig-1g.5gb, hugepages-2Mi, ...) live in `scalar`.
struct Resources {
  int64_t milliCpu = 0;
  int64_t memory = 0;            // bytes
  int64_t ephemeralStorage = 0;  // bytes
  int64_t pods = 0;
  std::vector<ResourceAmount> scalar;

  // Amount of a resource by its Kubernetes name ("cpu" answers milli-cores); 0 when absent.
  int64_t get(std::string_view name) const {
    if (name == "cpu") return milliCpu;
    if (name == "memory") return memory;
    if (name == "ephemeral-storage") return ephemeralStorage;
    if (name == "pods") return pods;
    for (const auto& r : scalar) {
      if (r.name == name) return r.value;
    }
    return 0;
  }
};

struct OwnerReference {
  std::string_view apiVersion;
  std::string_view kind;
  std::string_view name;
  std::string_view uid;
  bool controller = false;
};

enum class SelectorOp : uint8_t { In, NotIn, Exists, DoesNotExist, Gt, Lt };

struct NodeSelectorRequirement {
  std::string_view key;
  SelectorOp op = SelectorOp::In;
  std::vector<std::string_view> values;
};

// Requirements inside one term are ANDed; terms of a NodeSelector are ORed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;
  std::vector<NodeSelectorRequirement> matchFields;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

enum class TaintEffect : uint8_t { None, NoSchedule, PreferNoSchedule, NoExecute };

struct Toleration {
  std::string_view key;       // empty with operator Exists: tolerates everything
  bool opExists = false;      // operator Exists; otherwise Equal
  std::string_view value;
  TaintEffect effect = TaintEffect::None;  // None: matches every effect
};

struct Taint {
  std::string_view key;
  std::string_view value;
  TaintEffect effect = TaintEffect::NoSchedule;
};

enum class PodPhase : uint8_t { Unknown, Pending, Running, Succeeded, Failed };

struct Pod {
  std::string_view name;
  std::string_view namespace_;
  std::string_view uid;
  std::string_view resourceVersion;
  std::vector<KeyValue> labels;
  std::vector<KeyValue> annotations;
  std::vector<OwnerReference> ownerReferences;
  bool terminating = false;  // metadata.deletionTimestamp is set

  std::string_view nodeName;
  std::string_view schedulerName;
  int32_t priority = 0;      // spec.priority; 0 when absent
  std::vector<KeyValue> nodeSelector;
  std::vector<NodeSelectorTerm> requiredNodeAffinity;  // ORed terms
  std::vector<PreferredSchedulingTerm> preferredNodeAffinity;
  std::vector<Toleration> tolerations;

  PodPhase phase = PodPhase::Unknown;
  std::string_view nominatedNodeName;

  // Effective requests, computed exactly as kube-scheduler's PodRequests: containers summed,
  // init containers and restartable sidecars folded in, overhead added, limits defaulted into
  // missing requests.
  Resources requests;

  const OwnerReference* controllerRef() const {
    for (const auto& o : ownerReferences) {
      if (o.controller) return &o;
    }
    return nullptr;
  }
};

struct Node {
  std::string_view name;
  std::string_view uid;
  std::string_view resourceVersion;
  std::vector<KeyValue> labels;
  std::vector<KeyValue> annotations;
  bool unschedulable = false;
  std::vector<Taint> taints;
  Resources capacity;
  Resources allocatable;
  // The node object's exact JSON bytes, so a full-Nodes filter reply can echo the input
  // object unmodified without re-serialising it.
  std::string_view raw;
};

}  // namespace fleetsched::codec
