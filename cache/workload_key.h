// The workload a pod belongs to, for zone spreading and packing: the same rule the Zone plugin
// applies to the pod being scheduled, so the counts the cache keeps under a key are the counts
// the plugin asks for with it.
//
//   controller owner reference present  → "<Kind>/<name>"   (a ReplicaSet's name is used as is)
//   else the first of `labels` present  → its value
//   else                                → "" (no workload; the pod is not counted)
//
// The key is not namespace-qualified, matching the Zone plugin's definition.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codec/model.h"

namespace fleetsched::cache {

// Writes the key into `out` (cleared first) and returns false when the pod has none.
bool workloadKey(const codec::Pod& pod, const std::vector<std::string>& labels, std::string& out);

}  // namespace fleetsched::cache
