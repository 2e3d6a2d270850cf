// Log-linear latency histogram in the HdrHistogram manner: values below 256 ns are exact, above
// that each power of two is split into 128 linear buckets, so any recorded value is reported
// within 0.8 % of itself, from nanoseconds to hours, in a fixed 60 KB table with O(1) record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fleetsched::tools::loadgen {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 8;
  static constexpr size_t kBuckets = (64 - kSubBits + 1) * (size_t{1} << (kSubBits - 1)) + (size_t{1} << (kSubBits - 1));

  LatencyHistogram() : counts_(kBuckets, 0) {}

  void record(uint64_t ns) {
    ++counts_[bucketOf(ns)];
    ++count_;
    sum_ += ns;
    if (ns > max_) max_ = ns;
    if (ns < min_) min_ = ns;
  }
  void merge(const LatencyHistogram& other);
  void reset();

  uint64_t count() const { return count_; }
  uint64_t max() const { return count_ ? max_ : 0; }
  uint64_t min() const { return count_ ? min_ : 0; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // Smallest value v such that at least `percentile` % of the recorded values are <= v, to
  // within the bucket width (the bucket's highest value, capped at max()). 0 when empty.
  uint64_t percentile(double percentile) const;

  static size_t bucketOf(uint64_t ns);
  static uint64_t bucketLow(size_t bucket);
  static uint64_t bucketHigh(size_t bucket);  // inclusive

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = UINT64_MAX;
};

}  // namespace fleetsched::tools::loadgen
