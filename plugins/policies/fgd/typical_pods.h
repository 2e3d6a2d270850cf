// The target workload FGD measures fragmentation against, learned from the pods seen, never
// configured: pods are keyed by class (CPU, per-GPU share, GPU count, allowed-model string),
// counted, sorted by count (ties: larger CPU, share, count, model string first) and the most
// popular classes are kept until they cover `keepPercent` of all pods; their popularities are
// renormalised to sum to 1. The replay observes the whole trace up front; a server can observe
// the pods its cache sees and rebuild its FragModel when generation() moves on.
//
// FGD's classes leave memory out, as the published method does. Fleet's count it: each kept
// class is split by the memory its pods ask for, the pieces sharing its popularity in
// proportion to their pods, so the cut and each shape's weight stay FGD's and memory only
// refines them.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/framework.h"

namespace fleetsched::plugins::policies {

struct PodClass {
  int64_t milliCpu = 0;
  int32_t gpuMilli = 0;  // per GPU, 1..1000; 0 for a CPU-only pod
  int32_t gpuCount = 0;
  std::string models;    // allowed GPU models, '|'-separated, exactly as written; empty = any
  int64_t memory = 0;    // bytes; 0 in classes that leave memory out
  auto operator<=>(const PodClass&) const = default;
};

enum class ClassMemory { kLeftOut, kCounted };

struct TypicalClass {
  PodClass pod;
  uint64_t count = 0;
  double popularity = 0;  // share among the kept classes; the kept classes sum to 1
};

class TypicalPods {
 public:
  static constexpr double kDefaultKeepPercent = 95;

  explicit TypicalPods(double keepPercent = kDefaultKeepPercent) : keepPercent_(keepPercent) {}

  void observe(const PodClass& pod, uint64_t weight = 1);
  // `models` is the pod's allowed-model list (fleetsched.io/gpu-models), empty for any model.
  void observe(const PodInfo& pod, std::string_view models);

  // The kept classes, most popular first (split by memory: each class's pieces in ascending
  // memory); keepPercent < 0 uses the constructor's.
  std::vector<TypicalClass> classes(double keepPercent = -1, ClassMemory memory = ClassMemory::kLeftOut) const;
  uint64_t observed() const { return observed_; }
  // Changes whenever the result of classes() may change.
  uint64_t generation() const { return observed_; }

 private:
  double keepPercent_;
  uint64_t observed_ = 0;
  std::map<PodClass, uint64_t> counts_;
};

}  // namespace fleetsched::plugins::policies
