#include "plugins/policies/policies.h"

#include <array>

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

std::shared_ptr<const FragModel> fragModelFor(std::string_view name, const TypicalPods& typical) {
  if (!policyUsesTypicalPods(name)) return nullptr;
  return std::make_shared<FragModel>(
      typical.classes(TypicalPods::kDefaultKeepPercent, name == "fleet" ? kFleetClassMemory : kFgdClassMemory));
}

std::shared_ptr<FragCache> fragCacheFor(std::string_view name, std::shared_ptr<const FragModel> model) {
  if (!model || !policyUsesTypicalPods(name)) return nullptr;
  return std::make_shared<FragCache>(std::move(model));
}

std::unique_ptr<Plugin> createPolicy(std::string_view name, const PolicyArgs& args, std::string* error) {
  if (name == "random") return createRandomPolicy({args.seed});
  if (name == "dotprod") return createDotProductPolicy();
  if (name == "clustering") return createGpuClusteringPolicy();
  if (name == "packing") return createGpuPackingPolicy();
  if (name == "bestfit") return createBestFitPolicy();
  if (name == "fgd") return createFgdPolicy({args.fragModel, args.fragCache});
  if (name == "fleet") return createFleetPolicy({args.fragModel, args.fragCache});
  if (error != nullptr) {
    error->assign("unknown policy \"").append(name).append("\" (known:");
    for (auto n : kNames) error->append(" ").append(n);
    error->append(")");
  }
  return nullptr;
}

}  // namespace fleetsched::plugins::policies
