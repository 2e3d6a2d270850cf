// The accounting audit behind GET /debug/audit: fleetsched's per-node charges checked against
// themselves (no node charged beyond its allocatable GPUs) and against a fresh pod list from
// kube-apiserver (the pods' own requests, summed per node), which is the source of truth.
#pragma once

#include <string>
#include <string_view>

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

// Checks the snapshot alone (compare = false) or against `podList` (a padded PodList body,
// compare = true). Reservations in flight are charges the pod list cannot show yet, so a
// node with live reservations is reported but not counted as mismatched.
bool audit(const cache::Snapshot& snap, const cache::Cache& cache, bool compare, std::string_view podList,
           codec::Decoder& decoder, AuditResult& out, std::string& error);

}  // namespace fleetsched::engine
