// Typical pods learned online, for FGD-style plugins running in the server where no trace is
// known up front: every pod the plugin sees at PreFilter is observed, and the fragmentation
// model (with a fresh FragCache) is rebuilt after 1, 2, 4, ... 1024 pods and then every 1024,
// so early decisions adapt fast and later rebuilds (which drop the memo) stay rare.
//
// Not thread-safe, like FragCache: one per scheduling thread.
#pragma once

#include <cstdint>
#include <memory>

#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/fgd/typical_pods.h"

namespace fleetsched::plugins::policies {

class OnlineTypicalPods {
 public:
  static constexpr uint64_t kRebuildEvery = 1024;

  OnlineTypicalPods(double keepPercent, FragCache::ScoreScale scale) : typical_(keepPercent), scale_(scale) {}

  // Observes `pod` (its fleetsched.io/gpu-models annotation is part of the class) and returns
  // the cache to score with now.
  std::shared_ptr<FragCache> observe(const PodInfo& pod);

  uint64_t observed() const { return typical_.observed(); }

 private:
  TypicalPods typical_;
  FragCache::ScoreScale scale_;
  uint64_t nextRebuild_ = 1;
  std::shared_ptr<FragCache> cache_;
};

}  // namespace fleetsched::plugins::policies
