#include "plugins/policies/fgd/typical_pods.h"

#include <algorithm>

namespace fleetsched::plugins::policies {

void TypicalPods::observe(const PodClass& pod, uint64_t weight) {
  counts_[pod] += weight;
  observed_ += weight;
}

void TypicalPods::observe(const PodInfo& pod, std::string_view models) {
  PodClass c;
  c.milliCpu = pod.milliCpu;
  if (pod.wantsGpu()) {
    c.gpuMilli = pod.gpuMilli;
    c.gpuCount = pod.gpuCount;
    c.models = std::string(models);
  }
  observe(c);
}

std::vector<TypicalClass> TypicalPods::classes(double keepPercent) const {
  std::vector<TypicalClass> all;
  all.reserve(counts_.size());
  for (const auto& [pod, count] : counts_) all.push_back({pod, count, 0});
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
  for (auto& c : all) c.popularity = static_cast<double>(c.count) / kept;
  return all;
}

}  // namespace fleetsched::plugins::policies
