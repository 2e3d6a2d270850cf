// Percentiles are the load generator's whole output; a bucket mapping error would shift every
// reported number silently.
#include "tools/loadgen/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace fleetsched::tools::loadgen {
namespace {

TEST(LatencyHistogram, BucketsCoverEveryValueContiguously) {
  for (size_t b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    ASSERT_EQ(LatencyHistogram::bucketHigh(b) + 1, LatencyHistogram::bucketLow(b + 1)) << b;
  }
  for (uint64_t v : {0ull, 1ull, 255ull, 256ull, 257ull, 1000ull, 123456789ull, 1ull << 40, ~0ull}) {
    size_t b = LatencyHistogram::bucketOf(v);
    EXPECT_LE(LatencyHistogram::bucketLow(b), v);
    EXPECT_GE(LatencyHistogram::bucketHigh(b), v);
  }
}

TEST(LatencyHistogram, RelativeErrorIsBelowOnePercent) {
  for (uint64_t v = 256; v < (1ull << 50); v = v * 3 + 7) {
    size_t b = LatencyHistogram::bucketOf(v);
    double width = static_cast<double>(LatencyHistogram::bucketHigh(b) - LatencyHistogram::bucketLow(b));
    EXPECT_LT(width / static_cast<double>(v), 0.008) << v;
  }
}

TEST(LatencyHistogram, PercentilesMatchASortedSample) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(11.0, 1.0);  // ~60 µs median, long tail
  std::vector<uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    auto v = static_cast<uint64_t>(dist(rng));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    auto exact = values[static_cast<size_t>(std::ceil(p / 100 * values.size())) - 1];
    auto got = h.percentile(p);
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(static_cast<double>(got), static_cast<double>(exact) * 1.008 + 1) << p;
  }
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.percentile(100), values.back());
  EXPECT_EQ(h.count(), values.size());
}

TEST(LatencyHistogram, MergeAddsCounts) {
  LatencyHistogram a, b;
  for (int i = 0; i < 100; ++i) a.record(1000);
  for (int i = 0; i < 100; ++i) b.record(5000);
  a.merge(b);
  EXPECT_EQ(a.count(), 200u);
  EXPECT_LE(a.percentile(50), 1008u);
  EXPECT_GE(a.percentile(51), 4990u);
  EXPECT_DOUBLE_EQ(a.mean(), 3000.0);
  LatencyHistogram empty;
  EXPECT_EQ(empty.percentile(99), 0u);
}

}  // namespace
}  // namespace fleetsched::tools::loadgen
