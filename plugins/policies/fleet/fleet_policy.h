// fleetsched's own GPU policy: FGD's fragmentation measure without the published scoring's
// precision loss. The node with the largest Δ = F(x) − F(x ⊕ p) computed in double precision
// wins (the published ⌊100·σ(Δ/1000)⌋ collapses most candidates into a few integer ties that
// the node-name order then decides); equal Δ goes to the node left with the least idle GPU (pack
// rather than spread), then the least CPU left. Scores are normalised so the best node alone gets
// 100 and the others scale below it. A shared pod takes the GPU with the largest Δ, ties to the
// tightest GPU.
#pragma once

#include <memory>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

class FragCache;

struct FleetArgs {
  std::shared_ptr<const FragModel> model;
  std::shared_ptr<FragCache> cache;  // as FgdArgs::cache
  // Ranking knobs, kept while measuring which wins.
  bool exactDelta = true;
  int mode = 1;  // rank by Δ itself rather than FGD's integer score
  // 0: name only, 1: least idle GPU left, 2: most idle GPU left, 3: least CPU left
  int tieBreakCpuPods = 1;
  int tieBreakGpuPods = 1;
  // > 0: re-weight the typical classes by count × (1 + gpuWeight × GPUs requested).
  double gpuWeight = 0;
};

std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args);

}  // namespace fleetsched::plugins::policies
