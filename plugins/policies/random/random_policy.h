// Random (FGD paper baseline): PreScore draws one feasible node uniformly; it scores 100 and all
// others 0. A shared pod gets a uniformly drawn GPU among those it fits on. The draws hash the
// seed with the pod's name, so the plugin stays immutable and a replay is reproducible.
#pragma once

#include <cstdint>
#include <memory>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

struct RandomArgs {
  uint64_t seed = 0;
};

std::unique_ptr<Plugin> createRandomPolicy(const RandomArgs& args);

// splitmix64 finaliser; exposed for the tests and the replay driver.
uint64_t mixBits(uint64_t x);

}  // namespace fleetsched::plugins::policies
