// The GPU placement policies as plugins, by name: the FGD paper's six (random, dotprod,
// clustering, packing, bestfit, fgd) and fleetsched's own (fleet). The plugins registry and the
// replay driver create them here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "plugins/framework.h"
#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/fgd/frag_model.h"

namespace fleetsched::plugins::policies {

struct PolicyArgs {
  uint64_t seed = 0;                              // random
  std::shared_ptr<const FragModel> typicalPods;   // fgd, fleet
  std::shared_ptr<FragCache> fragCache;           // fgd, fleet: optional, see FgdArgs::cache
};

// Short names, in the order reports list them.
std::span<const std::string_view> policyNames();

// nullptr and a message in *error for an unknown name.
std::unique_ptr<Plugin> createPolicy(std::string_view name, const PolicyArgs& args, std::string* error);

// True for the policies that need PolicyArgs::typicalPods.
bool policyUsesTypicalPods(std::string_view name);

}  // namespace fleetsched::plugins::policies
