// The accounting audit behind GET /debug/audit: fleetsched's per-node charges checked against
// themselves (no node charged beyond its allocatable GPUs) and against a pod list from
// kube-apiserver (the pods' own requests, summed per node), which is the source of truth.
//
// A comparison is only exact when both sides describe the same moment. The ledger is what the
// cache charged each node when it had applied the pod watch up to some resourceVersion; the pod
// list is then asked for at exactly that resourceVersion (Ingestor::audit), page by page, so
// pods bound meanwhile (a scheduling burst binds hundreds a second) are on neither side.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/cache.h"
#include "codec/decoder.h"

namespace fleetsched::engine {

struct AuditResult {
  size_t nodes = 0;
  size_t checkedPods = 0;
  size_t mismatchedNodes = 0;  // cache charges differ from the pod list's
  size_t overcommittedNodes = 0;
  std::string json;            // the report served on /debug/audit
};

// The cache's charges per node, copied out of one snapshot (holding the snapshot itself for
// the length of a paged list would hold back memory reclamation).
struct AuditLedger {
  struct Node {
    std::string name;
    std::string gpuResource;  // the node's GPU scalar; empty when it has none
    int64_t gpuAllocatable = 0;
    int64_t gpuUsed = 0;
    int64_t milliCpu = 0;
    int64_t pods = 0;
  };
  std::vector<Node> nodes;
  size_t reservationsLive = 0;  // charges no pod list shows yet
  uint64_t gpuOvercommits = 0;
};

AuditLedger captureLedger(const cache::Snapshot& snap, const cache::Cache& cache);

// The pod list's side: requests of bound, non-terminal pods summed per ledger node.
class PodListTally {
 public:
  explicit PodListTally(const AuditLedger& ledger);

  // Adds one PodList page (`padded`: codec::kDecodePadding readable bytes past its end) and
  // sets `continueToken` to the next page's (empty after the last one).
  bool addPage(std::string_view padded, codec::Decoder& decoder, std::string& continueToken, std::string& error);

  struct Sum {
    int64_t gpus = 0;
    int64_t milliCpu = 0;
    int64_t pods = 0;
  };
  const std::vector<Sum>& sums() const { return sums_; }  // by ledger node
  size_t checkedPods() const { return checkedPods_; }

 private:
  const AuditLedger& ledger_;
  std::unordered_map<std::string_view, uint32_t> index_;  // node name -> ledger position
  std::vector<Sum> sums_;
  size_t checkedPods_ = 0;
};

// Writes the report: the ledger alone (`tally` null) or compared with the pod list. A node with
// live reservations is reported but not counted as mismatched: those charges are ahead of any list.
void auditReport(const AuditLedger& ledger, const PodListTally* tally, AuditResult& out);

// The cache checked alone, as it is now.
void auditCache(const cache::Snapshot& snap, const cache::Cache& cache, AuditResult& out);

}  // namespace fleetsched::engine
