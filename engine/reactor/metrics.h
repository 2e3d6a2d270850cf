// Metrics: a small Prometheus registry. Register once at startup (or from any thread: registration
// and rendering take a mutex), keep the returned reference, and update it on the hot path: an
// update is a relaxed atomic load/store, no lookup, no lock. Names get the "fleetsched_" prefix if
// they lack it. Registering the same name and labels again returns the same metric.
//
// Threads: a Counter or Histogram has one writer thread at a time (any thread; readers may be
// concurrent). A Gauge may be set or added to from any number of threads.
//
//   Histogram& h = metrics.histogram("parse_seconds", "Parse time", {{"verb", "filter"}});
//   h.observeNanos(uv_hrtime() - t0);
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fleetsched::engine {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void inc(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Gauge {
 public:
  void set(double v) { v_.store(v, std::memory_order_relaxed); }
  void add(double d) { v_.fetch_add(d, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

// Log-linear buckets: upper bounds 1,2,..,9 x 10^k for 1 us .. 9 s, then 10 s (64 bounds), plus
// +Inf. Fine enough to read p50/p99 of microsecond phases and of multi-second stalls alike.
class Histogram {
 public:
  static constexpr size_t kBounds = 64;
  static double upperBoundSeconds(size_t i);
  static size_t bucketFor(uint64_t nanos);

  void observeNanos(uint64_t nanos) {
    bump(counts_[bucketFor(nanos)], 1);
    bump(sumNanos_, nanos);
    bump(count_, 1);
  }
  void observeSeconds(double s) { observeNanos(s <= 0 ? 0 : static_cast<uint64_t>(s * 1e9)); }

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sumSeconds() const { return static_cast<double>(sumNanos_.load(std::memory_order_relaxed)) / 1e9; }
  // Observations in bucket i alone (i == kBounds is +Inf).
  uint64_t bucketCount(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  // Upper bound (seconds) of the bucket holding quantile q in (0,1]; 0 when empty. It overstates
  // the true value by at most one bucket width (10%..100% of the value, 1 us below 1 us).
  double quantileSeconds(double q) const;

 private:
  static void bump(std::atomic<uint64_t>& a, uint64_t n) {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::array<std::atomic<uint64_t>, kBounds + 1> counts_{};
  std::atomic<uint64_t> sumNanos_{0};
  std::atomic<uint64_t> count_{0};
};

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  Counter& counter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, const Labels& labels = {});
  Histogram& histogram(std::string_view name, std::string_view help, const Labels& labels = {});

  // Appends the Prometheus text exposition (format 0.0.4) of every metric to out, after running
  // the setBeforeRender callback (gauges read at scrape time, such as the process's memory).
  void render(std::string& out) const;
  void setBeforeRender(std::function<void()> fn) { beforeRender_ = std::move(fn); }
  // Appends one human line per histogram series that has observations (for `--profile`):
  //   fleetsched_http_request_duration_seconds{verb="filter"} n=1200 mean=41.2us p50<=40us p99<=90us
  void renderSummary(std::string& out) const;

  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  enum class Type : uint8_t { kCounter, kGauge, kHistogram };
  struct Family;
  Family& family(std::string_view name, std::string_view help, Type type);
  void* find(Family& f, const std::string& labels);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Family>> families_;
  std::function<void()> beforeRender_;
};

}  // namespace fleetsched::engine
