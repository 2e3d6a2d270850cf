#include "plugins/policies/fgd/frag_model.h"

#include <cmath>

namespace fleetsched::plugins::policies {

FragModel::FragModel(std::vector<TypicalClass> classes) : classes_(std::move(classes)) {
  for (const auto& c : classes_) {
    cpu_.push_back(c.pod.milliCpu);
    memory_.push_back(c.pod.memory);
    countsMemory_ = countsMemory_ || c.pod.memory > 0;
    milli_.push_back(c.pod.gpuMilli);
    count_.push_back(c.pod.gpuCount);
    popularity_.push_back(c.popularity);
  }
}

std::vector<uint8_t> FragModel::accessFor(std::string_view model) const {
  std::vector<uint8_t> access(classes_.size(), 1);
  for (size_t t = 0; t < classes_.size(); ++t) {
    std::string_view list = classes_[t].pod.models;
    bool named = false, match = false;
    while (!list.empty()) {
      const size_t bar = list.find('|');
      const std::string_view item = list.substr(0, bar);
      if (!item.empty()) {
        named = true;
        match = match || item == model;
      }
      list = bar == std::string_view::npos ? std::string_view{} : list.substr(bar + 1);
    }
    access[t] = !named || (match && !model.empty());
  }
  return access;
}

// Accumulates exactly like the reference (per-class amounts into buckets, then the buckets in
// order) so that two states with the same class outcomes give bit-identical F: a CPU pod that
// changes no class must score Δ = 0 exactly, which maps to the 50 the published runs tie on.
std::array<double, kBucketCount> FragModel::buckets(const uint8_t* access, int64_t cpuLeft,
                                                    std::span<const int32_t> freeMilli, int64_t memoryLeft) const {
  std::array<double, kBucketCount> b{};
  int64_t idle = 0;
  for (int32_t g : freeMilli) idle += g;
  const double idleD = static_cast<double>(idle);
  for (size_t t = 0; t < cpu_.size(); ++t) {
    const double p = popularity_[t];
    // Memory shares FGD's CPU buckets: both are the node's room outside its GPUs.
    const bool cpuFits = cpuLeft >= cpu_[t] && memoryLeft >= memory_[t];
    if (milli_[t] == 0) {
      b[cpuFits ? kXlSatisfied : kXrLackCpu] += p * idleD;
      continue;
    }
    if (!access[t]) {
      b[kNoAccess] += p * idleD;
      continue;
    }
    int fit = 0;
    int64_t small = 0;
    for (int32_t g : freeMilli) {
      if (g >= milli_[t]) {
        ++fit;
      } else {
        small += g;
      }
    }
    if (fit >= count_[t]) {
      if (cpuFits) {
        b[kQ2LackGpu] += p * static_cast<double>(small);
        b[kQ3Satisfied] += p * static_cast<double>(idle - small);
      } else {
        b[kQ4LackCpu] += p * idleD;
      }
    } else {
      b[cpuFits ? kQ2LackGpu : kQ1LackBoth] += p * idleD;
    }
  }
  return b;
}

double FragModel::fragmentation(const uint8_t* access, int64_t cpuLeft, std::span<const int32_t> freeMilli,
                                int64_t memoryLeft) const {
  const auto b = buckets(access, cpuLeft, freeMilli, memoryLeft);
  double f = 0;
  for (int i = 0; i < kBucketCount; ++i) {
    if (i != kQ3Satisfied) f += b[i];
  }
  return f;
}

int32_t fgdScoreOfDelta(double delta) {
  if (std::isinf(delta) && delta < 0) return 0;
  const double sigmoid = 1.0 / (1.0 + std::exp(-delta / 1000));
  return static_cast<int32_t>(sigmoid * 100);
}

}  // namespace fleetsched::plugins::policies
