// The GPU placement policies as plugins, by name: the FGD paper's six (random, dotprod,
// clustering, packing, bestfit, fgd) and fleetsched's own (fleet). The replay driver creates them
// here; the server's registry table builds them from YAML (registry_entries.h).
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
  std::shared_ptr<const FragModel> fragModel;     // fgd, fleet (fragModelFor)
  std::shared_ptr<FragCache> fragCache;           // fgd, fleet: optional, see FgdArgs::cache
};

// Short names, in the order reports list them.
std::span<const std::string_view> policyNames();

// nullptr and a message in *error for an unknown name.
std::unique_ptr<Plugin> createPolicy(std::string_view name, const PolicyArgs& args, std::string* error);

// True for the policies that need PolicyArgs::fragModel.
bool policyUsesTypicalPods(std::string_view name);

// The fragmentation model a policy scores with, cut from the observed pods (FGD and fleet: the
// classes covering 95 % of pods); nullptr for policies without one.
std::shared_ptr<const FragModel> fragModelFor(std::string_view name, const TypicalPods& typical);
// A cache over `model`, to share with the policy through PolicyArgs::fragCache.
std::shared_ptr<FragCache> fragCacheFor(std::string_view name, std::shared_ptr<const FragModel> model);

}  // namespace fleetsched::plugins::policies
