// FGD's fragmentation measure (Weng et al., ATC '23; spec/gpu-scheduling.md §2.7): for a node
// with CPU left C and idle shares g_1..g_K on GPUs of model M, the expected idle milli-GPU a task
// drawn from the typical pods cannot use,
//     F(x) = Σ_t p_t · frag_t(x),
// where frag_t is the idle share on GPUs too small for t when t fits the node (CPU, model and
// enough GPUs), and all idle GPU otherwise (CPU-only tasks included). When the classes carry
// memory (Fleet's, typical_pods.h), t must fit the node's memory too: a node out of memory
// strands its idle GPUs as one out of CPU does. The model is immutable; FragCache memoises it
// per node state.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "plugins/policies/fgd/typical_pods.h"

namespace fleetsched::plugins::policies {

// Where a node's idle GPU goes for the report (the paper's quadrants).
enum FragBucket : int { kQ1LackBoth, kQ2LackGpu, kQ3Satisfied, kQ4LackCpu, kXlSatisfied, kXrLackCpu, kNoAccess, kBucketCount };

class FragModel {
 public:
  // The memory left to pass for a model that leaves memory out.
  static constexpr int64_t kAnyMemory = std::numeric_limits<int64_t>::max();

  explicit FragModel(std::vector<TypicalClass> classes);

  const std::vector<TypicalClass>& classes() const { return classes_; }
  size_t size() const { return classes_.size(); }

  // Per class, 1 when a task of that class may run on GPUs of `model` (exact match against
  // its '|'-split allowed-model list; an empty list allows every model).
  std::vector<uint8_t> accessFor(std::string_view model) const;

  // F(x) in milli-GPU. `access` comes from accessFor(the node's model); `freeMilli` holds the
  // idle share of each GPU (any order: F depends on the multiset only); `memoryLeft` matters
  // only when countsMemory().
  double fragmentation(const uint8_t* access, int64_t cpuLeft, std::span<const int32_t> freeMilli,
                       int64_t memoryLeft = kAnyMemory) const;

  // The same amount split into the seven report buckets; F = the sum of all but kQ3Satisfied.
  std::array<double, kBucketCount> buckets(const uint8_t* access, int64_t cpuLeft,
                                           std::span<const int32_t> freeMilli,
                                           int64_t memoryLeft = kAnyMemory) const;
  // True when some class asks for memory (TypicalPods::classes with ClassMemory::kCounted).
  bool countsMemory() const { return countsMemory_; }

 private:
  std::vector<TypicalClass> classes_;
  // Hot copies of the class fields, one array each, for the scan in fragmentation().
  std::vector<int64_t> cpu_;
  std::vector<int64_t> memory_;
  std::vector<int32_t> milli_;
  std::vector<int32_t> count_;
  std::vector<double> popularity_;
  bool countsMemory_ = false;
};

// FGD's node score for a fragmentation drop: floor(100 * sigmoid(delta / 1000)), truncated as
// the reference does; 0 for -infinity (the pod does not fit).
int32_t fgdScoreOfDelta(double delta);

}  // namespace fleetsched::plugins::policies
