// fleetsched's own GPU policy: FGD's fragmentation measure (frag_model.h) with four changes,
// each kept because it measured better on the openb traces (bench/replay/README.md):
//   1. Whole-GPU and CPU-only pods rank nodes by floor(100·σ(Δ/2000)) instead of Δ/1000: the
//      coarser score leaves more ties to the fixed node order, i.e. first-fit packing among
//      nodes that fragment about equally. Shared pods keep FGD's resolution, where exact GPU
//      pairing matters.
//   2. A CPU-only pod breaks ties towards the node with the least idle GPU left, so CPU is
//      taken where the GPUs are used up rather than where it strands idle GPUs.
//   3. A shared pod takes the GPU with the best score, ties going to the tightest GPU.
//   4. The typical pods keep the classes covering 98 % of pods (FGD: 95 %).
// Ranking by exact Δ, best-fit or spread tie-breaks for GPU pods, and GPU-weighted
// popularity were measured too and lost to FGD; see the README.
#pragma once

#include <memory>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

class FragCache;

// Share of pods the fleet policy's typical classes cover.
constexpr double kFleetKeepPercent = 98;
// Δ scale of the score of whole-GPU and CPU-only pods (FGD: 1000).
constexpr double kFleetCoarseScale = 2000;

struct FleetArgs {
  // Typical pods cut at kFleetKeepPercent (fragModelFor("fleet", ...)).
  std::shared_ptr<const FragModel> model;
  // As FgdArgs::cache, built with ScoreScale{1000, kFleetCoarseScale} (fragCacheFor("fleet")).
  std::shared_ptr<FragCache> cache;
};

// Without a model, learns the typical pods online like FGD (online_typical.h).
std::unique_ptr<Plugin> createFleetPolicy(const FleetArgs& args);

constexpr std::string_view kFleetName = "Fleet";

}  // namespace fleetsched::plugins::policies
