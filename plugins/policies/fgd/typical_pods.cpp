#include "plugins/policies/fgd/typical_pods.h"

#include <algorithm>
#include <limits>

namespace fleetsched::plugins::policies {

void TypicalPods::observe(const PodClass& pod, uint64_t weight) {
  counts_[pod] += weight;
  observed_ += weight;
}

void TypicalPods::observe(const PodInfo& pod, std::string_view models) {
  PodClass c;
  c.milliCpu = pod.milliCpu;
  c.memory = pod.memory;
  if (pod.wantsGpu()) {
    c.gpuMilli = pod.gpuMilli;
    c.gpuCount = pod.gpuCount;
    c.models = std::string(models);
  }
  observe(c);
}

std::vector<TypicalClass> TypicalPods::classes(double keepPercent, ClassMemory memory) const {
  // The cut is FGD's, on the classes without memory.
  std::map<PodClass, uint64_t> shapes;
  for (const auto& [pod, count] : counts_) {
    PodClass c = pod;
    c.memory = 0;
    shapes[c] += count;
  }
  std::vector<TypicalClass> all;
  all.reserve(shapes.size());
  for (const auto& [pod, count] : shapes) all.push_back({pod, count, 0});
  // Most popular first; equal counts put the larger class first, as the reference does.
  std::sort(all.begin(), all.end(), [](const TypicalClass& a, const TypicalClass& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.pod.milliCpu != b.pod.milliCpu) return a.pod.milliCpu > b.pod.milliCpu;
    if (a.pod.gpuMilli != b.pod.gpuMilli) return a.pod.gpuMilli > b.pod.gpuMilli;
    if (a.pod.gpuCount != b.pod.gpuCount) return a.pod.gpuCount > b.pod.gpuCount;
    return a.pod.models > b.pod.models;
  });
  const double wanted = (keepPercent < 0 ? keepPercent_ : keepPercent) * static_cast<double>(observed_) / 100.0;
  double kept = 0;
  size_t n = 0;
  while (n < all.size() && kept < wanted) kept += static_cast<double>(all[n++].count);
  all.resize(n);
  if (memory == ClassMemory::kCounted) {
    // counts_ orders memory last, so a class's pieces are adjacent, from the lowest memory on.
    std::vector<TypicalClass> split;
    for (const auto& c : all) {
      PodClass first = c.pod;
      first.memory = std::numeric_limits<int64_t>::min();
      for (auto it = counts_.lower_bound(first); it != counts_.end(); ++it) {
        PodClass shape = it->first;
        shape.memory = 0;
        if (shape != c.pod) break;
        split.push_back({it->first, it->second, 0});
      }
    }
    all = std::move(split);
  }
  for (auto& c : all) c.popularity = static_cast<double>(c.count) / kept;
  return all;
}

}  // namespace fleetsched::plugins::policies
