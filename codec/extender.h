// The kube-scheduler extender/v1 wire types (k8s.io/kube-scheduler/extender/v1) as plain
// structs: requests as the Decoder fills them, replies as the encoders read them. Views follow
// model.h's rule: they point into the request buffer (or the Decoder's string buffer) and stay
// valid until the next decode on the same Decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "codec/model.h"

namespace fleetsched::codec {

// Which node field a filter/prioritize request carried, and so which one the reply must carry:
// kube-scheduler with nodeCacheCapable sends NodeNames and rejects every node when the reply's
// NodeNames is null.
enum class NodesMode : uint8_t { NodeNames, Nodes };

// ExtenderArgs: the filter and prioritize request.
struct ExtenderArgs {
  Pod pod;
  bool hasNodes = false;      // "Nodes" was present and not null
  bool hasNodeNames = false;  // "NodeNames" was present and not null
  std::vector<Node> nodes;    // Nodes.items, each with its raw JSON bytes
  std::vector<std::string_view> nodeNames;

  // NodeNames wins when both are set (kube-scheduler never sends both); with neither, the
  // request came from a cache-capable scheduler with an empty list, so NodeNames.
  NodesMode mode() const { return hasNodeNames || !hasNodes ? NodesMode::NodeNames : NodesMode::Nodes; }
};

// ExtenderBindingArgs: the bind request.
struct BindingArgs {
  std::string_view podName;
  std::string_view podNamespace;
  std::string_view podUid;
  std::string_view node;
};

// One node's victims. In Victims form (full pods) `pods` holds the decoded pods and `uids`
// their UIDs; in MetaVictims form only `uids` is filled. Encoders read `uids`.
struct NodeVictims {
  std::string_view node;
  std::vector<std::string_view> uids;
  std::vector<Pod> pods;
  int64_t numPdbViolations = 0;
};

// ExtenderPreemptionArgs: the preempt request. Exactly one map is set by kube-scheduler:
// NodeNameToMetaVictims when nodeCacheCapable, NodeNameToVictims otherwise.
struct PreemptionArgs {
  Pod pod;
  bool hasVictims = false;
  bool hasMetaVictims = false;
  std::vector<NodeVictims> nodeNameToVictims;      // in document order
  std::vector<NodeVictims> nodeNameToMetaVictims;  // in document order
};

struct FailedNode {
  std::string_view node;
  std::string_view reason;
};

// ExtenderFilterResult of a full-Nodes request (NodeNames mode: encoder.h's NodeNamesVerdicts).
// The encoder writes "items" from nodesRaw (`"items":[]` when nothing passes) and NodeNames null.
// The failed maps are written sorted by node name, `{}` when empty. A non-empty `error` produces
// Go's zero-value result instead: both lists and both maps null (kube-scheduler only reads Error
// then).
struct FilterResult {
  std::vector<std::string_view> nodesRaw;  // raw JSON of each passing input node
  std::vector<FailedNode> failedNodes;
  std::vector<FailedNode> failedAndUnresolvableNodes;
  std::string_view error;
};

// HostPriority; a prioritize reply is a bare array of these (`[]` when empty).
struct HostPriority {
  std::string_view host;
  int64_t score = 0;
};

}  // namespace fleetsched::codec
