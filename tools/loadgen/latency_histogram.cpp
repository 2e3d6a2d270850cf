#include "tools/loadgen/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fleetsched::tools::loadgen {

namespace {
constexpr uint64_t kExact = uint64_t{1} << LatencyHistogram::kSubBits;  // 256
constexpr uint64_t kHalf = kExact / 2;                                  // 128 buckets per octave
}  // namespace

size_t LatencyHistogram::bucketOf(uint64_t ns) {
  if (ns < kExact) return static_cast<size_t>(ns);
  const int msb = 63 - std::countl_zero(ns);
  const int shift = msb - (kSubBits - 1);  // ns >> shift lies in [128, 256)
  return static_cast<size_t>(kExact + static_cast<uint64_t>(shift - 1) * kHalf + ((ns >> shift) - kHalf));
}

uint64_t LatencyHistogram::bucketLow(size_t bucket) {
  if (bucket < kExact) return bucket;
  const uint64_t rel = bucket - kExact;
  const int shift = static_cast<int>(rel / kHalf) + 1;
  return (kHalf + rel % kHalf) << shift;
}

uint64_t LatencyHistogram::bucketHigh(size_t bucket) {
  if (bucket < kExact) return bucket;
  const uint64_t rel = bucket - kExact;
  const int shift = static_cast<int>(rel / kHalf) + 1;
  return bucketLow(bucket) + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

void LatencyHistogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = sum_ = max_ = 0;
  min_ = UINT64_MAX;
}

uint64_t LatencyHistogram::percentile(double percentile) const {
  if (count_ == 0) return 0;
  const double p = std::clamp(percentile, 0.0, 100.0);
  uint64_t target = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  if (target == 0) target = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= target) return std::min(bucketHigh(i), max_);
  }
  return max_;
}

}  // namespace fleetsched::tools::loadgen
