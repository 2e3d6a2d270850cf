// FGD, fragmentation gradient descent (Weng et al., ATC '23), in parity mode: a node scores
// floor(100 * sigmoid(Δ / 1000)) with Δ = F(x) − F(x ⊕ p) the drop in expected unusable GPU
// (frag_model.h), maximised over the GPU a shared pod could take; no normalisation. A shared pod
// gets the first GPU reaching the node's score; whole GPUs go to the lowest-index free ones.
// Scoring goes through a FragCache, so it costs two array reads per node in the steady state.
#pragma once

#include <memory>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

class FragCache;

struct FgdArgs {
  // The typical-pod model (the replay learns it from the trace). Without one the plugin learns
  // the typical pods online from the pods it sees (online_typical.h).
  std::shared_ptr<const FragModel> model;
  // Optional cache shared with the owner of the node records, who refreshes it when a node
  // changes (FragCache::refresh); built from `model` when absent.
  std::shared_ptr<FragCache> cache;
};

std::unique_ptr<Plugin> createFgdPolicy(const FgdArgs& args);

constexpr std::string_view kFgdName = "FGD";
// FGD's typical pods leave memory out, as the published method does (typical_pods.h).
constexpr ClassMemory kFgdClassMemory = ClassMemory::kLeftOut;

}  // namespace fleetsched::plugins::policies
