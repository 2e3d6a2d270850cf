#include "engine/reactor/metrics.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "engine/reactor/process_metrics.h"

namespace fleetsched::engine {
namespace {

bool contains(const std::string& text, std::string_view line) { return text.find(line) != std::string::npos; }

TEST(Histogram, BucketBoundsAreLogLinearFrom1usTo10s) {
  EXPECT_DOUBLE_EQ(Histogram::upperBoundSeconds(0), 1e-6);
  EXPECT_DOUBLE_EQ(Histogram::upperBoundSeconds(1), 2e-6);
  EXPECT_DOUBLE_EQ(Histogram::upperBoundSeconds(8), 9e-6);
  EXPECT_DOUBLE_EQ(Histogram::upperBoundSeconds(9), 1e-5);
  EXPECT_DOUBLE_EQ(Histogram::upperBoundSeconds(62), 9.0);
  EXPECT_DOUBLE_EQ(Histogram::upperBoundSeconds(63), 10.0);
  for (size_t i = 1; i < Histogram::kBounds; ++i)
    EXPECT_LT(Histogram::upperBoundSeconds(i - 1), Histogram::upperBoundSeconds(i)) << i;
}

// Issue 26: 180 of 650 rendered `le` labels carried float noise ("0.30000000000000004",
// "3.0000000000000004e-06"). Every bound must render as its decimal, m x 10^k, and nothing longer.
TEST(Histogram, RenderedBoundsAreExactDecimals) {
  Metrics m;
  m.histogram("latency_seconds", "help", {{"verb", "filter"}});
  std::string text;
  m.render(text);
  std::vector<std::string> labels;
  for (size_t at = text.find("le=\""); at != std::string::npos; at = text.find("le=\"", at + 1)) {
    const size_t from = at + 4;
    labels.push_back(text.substr(from, text.find('"', from) - from));
  }
  ASSERT_EQ(labels.size(), Histogram::kBounds + 1);
  EXPECT_EQ(labels.back(), "+Inf");
  for (size_t i = 0; i < Histogram::kBounds; ++i) {
    // The decimal as a person writes it: m x 10^(decade - 6), and 10 for the last bound.
    const bool last = i + 1 == Histogram::kBounds;
    char decimal[16];
    std::snprintf(decimal, sizeof decimal, "%de%d", last ? 1 : static_cast<int>(i % 9 + 1),
                  last ? 1 : static_cast<int>(i / 9) - 6);
    const double exact = std::strtod(decimal, nullptr);
    EXPECT_EQ(std::strtod(labels[i].c_str(), nullptr), exact) << labels[i];
    EXPECT_LE(labels[i].size(), 5u) << "bound " << i << " rendered as " << labels[i];
  }
  EXPECT_EQ(labels[0], "1e-06");
  EXPECT_EQ(labels[2], "3e-06");
  EXPECT_EQ(labels[47], "0.3");
  EXPECT_EQ(labels[63], "10");
}

TEST(Histogram, ObservationLandsInTheFirstBucketWhoseBoundHoldsIt) {
  // Prometheus buckets are inclusive upper bounds (le).
  EXPECT_EQ(Histogram::bucketFor(0), 0u);
  EXPECT_EQ(Histogram::bucketFor(1000), 0u);
  EXPECT_EQ(Histogram::bucketFor(1001), 1u);
  EXPECT_EQ(Histogram::bucketFor(2000), 1u);
  EXPECT_EQ(Histogram::bucketFor(9001), 9u);
  EXPECT_EQ(Histogram::bucketFor(10000), 9u);
  EXPECT_EQ(Histogram::bucketFor(10001), 10u);
  EXPECT_EQ(Histogram::bucketFor(10'000'000'000ull), 63u);
  EXPECT_EQ(Histogram::bucketFor(10'000'000'001ull), Histogram::kBounds);
  for (size_t i = 0; i < Histogram::kBounds; ++i) {
    auto ns = static_cast<uint64_t>(Histogram::upperBoundSeconds(i) * 1e9 + 0.5);
    EXPECT_EQ(Histogram::bucketFor(ns), i) << ns;
    EXPECT_EQ(Histogram::bucketFor(ns + 1), i + 1) << ns;
  }
}

TEST(Histogram, QuantileReportsTheBucketBound) {
  Histogram h;
  EXPECT_EQ(h.quantileSeconds(0.5), 0);
  for (int i = 0; i < 99; ++i) h.observeNanos(3'500);  // 3.5 us -> le 4us
  h.observeSeconds(0.25);                              // 250 ms -> le 300ms
  EXPECT_DOUBLE_EQ(h.quantileSeconds(0.5), 4e-6);
  EXPECT_DOUBLE_EQ(h.quantileSeconds(0.99), 4e-6);
  EXPECT_DOUBLE_EQ(h.quantileSeconds(1.0), 0.3);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_NEAR(h.sumSeconds(), 99 * 3.5e-6 + 0.25, 1e-12);
}

TEST(Metrics, RegisteringTwiceReturnsTheSameMetric) {
  Metrics m;
  Counter& a = m.counter("x_total", "help", {{"verb", "filter"}});
  Counter& b = m.counter("fleetsched_x_total", "help", {{"verb", "filter"}});
  Counter& c = m.counter("x_total", "help", {{"verb", "bind"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
}

TEST(Metrics, RendersPrometheusText) {
  Metrics m;
  m.counter("requests_total", "Requests", {{"verb", "filter"}}).inc(3);
  m.counter("requests_total", "Requests", {{"verb", "bind"}}).inc();
  m.gauge("nodes", "Nodes in cache").set(5000);
  m.counter("odd_total", "Odd \\ help\nline", {{"kind", "a\"b\\c\nd"}}).inc();
  Histogram& h = m.histogram("latency_seconds", "Latency", {{"verb", "filter"}});
  h.observeNanos(1500);
  h.observeNanos(20'000'000'000ull);
  std::string out;
  m.render(out);
  EXPECT_TRUE(
      contains(out, "# HELP fleetsched_requests_total Requests\n# TYPE fleetsched_requests_total counter\n"));
  EXPECT_TRUE(contains(out, "fleetsched_requests_total{verb=\"filter\"} 3\n"));
  EXPECT_TRUE(contains(out, "fleetsched_requests_total{verb=\"bind\"} 1\n"));
  EXPECT_TRUE(contains(out, "# TYPE fleetsched_nodes gauge\nfleetsched_nodes 5000\n"));
  EXPECT_TRUE(contains(out, "# HELP fleetsched_odd_total Odd \\\\ help\\nline\n"));
  EXPECT_TRUE(contains(out, "fleetsched_odd_total{kind=\"a\\\"b\\\\c\\nd\"} 1\n"));
  EXPECT_TRUE(contains(out, "# TYPE fleetsched_latency_seconds histogram\n"));
  EXPECT_TRUE(contains(out, "fleetsched_latency_seconds_bucket{verb=\"filter\",le=\"1e-06\"} 0\n"));
  EXPECT_TRUE(contains(out, "fleetsched_latency_seconds_bucket{verb=\"filter\",le=\"2e-06\"} 1\n"));
  EXPECT_TRUE(contains(out, "fleetsched_latency_seconds_bucket{verb=\"filter\",le=\"10\"} 1\n"));
  EXPECT_TRUE(contains(out, "fleetsched_latency_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 2\n"));
  EXPECT_TRUE(contains(out, "fleetsched_latency_seconds_count{verb=\"filter\"} 2\n"));
  EXPECT_TRUE(contains(out, "fleetsched_latency_seconds_sum{verb=\"filter\"} 20.0000015\n"));
  // Every family is announced once, even with several series.
  EXPECT_EQ(out.find("# TYPE fleetsched_requests_total"), out.rfind("# TYPE fleetsched_requests_total"));
}

TEST(Metrics, UnlabelledHistogramGetsOnlyLe) {
  Metrics m;
  m.histogram("read_seconds", "Read").observeNanos(500);
  std::string out;
  m.render(out);
  EXPECT_TRUE(contains(out, "fleetsched_read_seconds_bucket{le=\"1e-06\"} 1\n"));
  EXPECT_TRUE(contains(out, "fleetsched_read_seconds_count 1\n"));
}

TEST(Metrics, GaugeAddIsSafeAcrossThreads) {
  Metrics m;
  Gauge& g = m.gauge("reservations", "Reservations");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) g.add(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(g.value(), 40000);
}

TEST(Metrics, SummaryListsHistogramsWithObservations) {
  Metrics m;
  Histogram& h = m.histogram("parse_seconds", "Parse", {{"verb", "filter"}});
  m.histogram("score_seconds", "Score");  // never observed: not listed
  for (int i = 0; i < 100; ++i) h.observeNanos(i < 98 ? 30'000 : 2'000'000);
  std::string out;
  m.renderSummary(out);
  EXPECT_EQ(out, "fleetsched_parse_seconds{verb=\"filter\"} n=100 mean=69.4us p50<=30us p99<=2ms\n");
}

TEST(MetricsDeath, TypeMismatchAborts) {
  Metrics m;
  m.counter("thing", "a counter");
  EXPECT_DEATH(m.gauge("thing", "now a gauge"), "two types");
}

// The process gauges follow what the kernel reports, read again at every render.
TEST(ProcessMetrics, FollowTheProcessAtEveryRender) {
  Metrics m;
  ProcessMetrics process(m);
  m.setBeforeRender([&process] { process.update(); });
  Gauge& fds = m.gauge("process_open_fds", "");
  std::string out;
  m.render(out);
  const double before = fds.value();
  EXPECT_GE(before, 3);  // stdin, stdout, stderr at least
  int opened[3];
  for (int& fd : opened) fd = ::open("/dev/null", O_RDONLY);
  out.clear();
  m.render(out);
  EXPECT_EQ(fds.value(), before + 3);
  for (int fd : opened) ::close(fd);
  EXPECT_GT(m.gauge("process_resident_memory_bytes", "").value(), 1 << 20);
  EXPECT_GE(m.gauge("process_cpu_seconds", "").value(), 0);
  const double start = m.gauge("process_start_time_seconds", "").value();
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_GT(start, now - 3600);
  EXPECT_LE(start, now + 1);
  EXPECT_NE(out.find("fleetsched_process_open_fds "), std::string::npos) << out;
}

}  // namespace
}  // namespace fleetsched::engine
