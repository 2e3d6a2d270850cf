// Typical pods learned online, for FGD-style plugins running in the server where no trace is
// known up front: every pod the plugin sees at PreFilter is observed once (kube-scheduler sends
// a pod to filter and to prioritize, and again on every retry: a pod is known by its UID among
// the last kRememberedUids), and the fragmentation model is rebuilt after 1, 2, 4, ... 1024 pods
// and then every 1024, so early decisions adapt fast and later rebuilds (which make every
// thread's FragCache start over) stay rare.
//
// Thread-safe: the plugins are shared by the reactor's loop thread, the off-loop worker and the
// binder, so observe() takes a mutex of its own (a set insert, and at a rebuild building the
// model), never held while anything is scored.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "plugins/policies/fgd/frag_model.h"
#include "plugins/policies/fgd/typical_pods.h"

namespace fleetsched::plugins::policies {

class OnlineTypicalPods {
 public:
  static constexpr uint64_t kRebuildEvery = 1024;
  static constexpr size_t kRememberedUids = 65536;

  OnlineTypicalPods(double keepPercent, ClassMemory memory) : typical_(keepPercent), memory_(memory) {}

  // Observes `pod` unless its UID was seen already (its fleetsched.io/gpu-models annotation is
  // part of the class; a pod without a UID, as in replay, always counts) and returns the model
  // to score with now.
  std::shared_ptr<const FragModel> observe(const PodInfo& pod);

  uint64_t observed() const;

 private:
  mutable std::mutex mutex_;  // everything below
  TypicalPods typical_;
  ClassMemory memory_;
  uint64_t nextRebuild_ = 1;
  std::shared_ptr<const FragModel> model_;
  std::unordered_set<std::string> seen_;
  std::deque<std::string> seenOrder_;  // oldest first, for eviction
};

}  // namespace fleetsched::plugins::policies
