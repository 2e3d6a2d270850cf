#include "plugins/policies/policies.h"

#include <array>
#include <cstdlib>

#include "plugins/policies/bestfit/best_fit_policy.h"
#include "plugins/policies/clustering/gpu_clustering_policy.h"
#include "plugins/policies/dotprod/dot_product_policy.h"
#include "plugins/policies/fgd/fgd_policy.h"
#include "plugins/policies/fleet/fleet_policy.h"
#include "plugins/policies/packing/gpu_packing_policy.h"
#include "plugins/policies/random/random_policy.h"

namespace fleetsched::plugins::policies {

namespace {
constexpr std::array<std::string_view, 7> kNames = {"random", "dotprod", "clustering", "packing",
                                                    "bestfit", "fgd",     "fleet"};
}

std::span<const std::string_view> policyNames() { return kNames; }

bool policyUsesTypicalPods(std::string_view name) { return name == "fgd" || name == "fleet"; }

std::unique_ptr<Plugin> createPolicy(std::string_view name, const PolicyArgs& args, std::string* error) {
  if (name == "random") return createRandomPolicy({args.seed});
  if (name == "dotprod") return createDotProductPolicy();
  if (name == "clustering") return createGpuClusteringPolicy();
  if (name == "packing") return createGpuPackingPolicy();
  if (name == "bestfit") return createBestFitPolicy();
  if (name == "fgd") return createFgdPolicy({args.typicalPods, args.fragCache});
  if (name == "fleet") {
    FleetArgs fa{args.typicalPods, args.fragCache};
    if (const char* v = std::getenv("FLEET_VARIANT")) {  // TEMP: experiment hook
      fa.exactDelta = v[0] == '1';
      fa.mode = v[0] - '0';
      fa.tieBreakCpuPods = v[1] - '0';
      fa.tieBreakGpuPods = v[2] - '0';
      fa.gpuWeight = std::atof(v + 3);
    }
    return createFleetPolicy(fa);
  }
  if (error != nullptr) {
    error->assign("unknown policy \"").append(name).append("\" (known:");
    for (auto n : kNames) error->append(" ").append(n);
    error->append(")");
  }
  return nullptr;
}

}  // namespace fleetsched::plugins::policies
