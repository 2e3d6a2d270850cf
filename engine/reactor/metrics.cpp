#include "engine/reactor/metrics.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "log/log.h"

namespace fleetsched::engine {
namespace {

constexpr std::string_view kPrefix = "fleetsched_";
constexpr uint64_t kFirstBoundNanos = 1000;
constexpr int kDecades = 7;
constexpr int kStepsPerDecade = 9;

void appendDouble(std::string& out, double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void appendUint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void appendEscaped(std::string& out, std::string_view s, bool quotes) {
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (quotes && c == '"')
      out += "\\\"";
    else
      out.push_back(c);
  }
}

// `{a="x",b="y"` without the closing brace, so histograms can add `le`; empty when no labels.
std::string renderLabels(const Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) {
    out.push_back(out.empty() ? '{' : ',');
    out += k;
    out += "=\"";
    appendEscaped(out, v, true);
    out.push_back('"');
  }
  return out;
}

}  // namespace

double Histogram::upperBoundSeconds(size_t i) {
  if (i >= kBounds - 1) return 10.0;
  // m x 10^(e-6) as one correctly rounded division of exact integers (10^k is exact for k <= 22),
  // so the double is the one nearest the decimal and prints as it ("3e-06", "0.3"). Multiplying
  // by 10 decade after decade accumulated rounding: le="0.30000000000000004".
  static constexpr double kPow10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  const size_t decade = i / kStepsPerDecade;  // 0..6
  return static_cast<double>(i % kStepsPerDecade + 1) / kPow10[6 - decade];
}

size_t Histogram::bucketFor(uint64_t nanos) {
  if (nanos <= kFirstBoundNanos) return 0;
  uint64_t p = kFirstBoundNanos;
  int e = 0;
  while (e < kDecades && nanos > p * 10) {
    p *= 10;
    ++e;
  }
  if (e == kDecades) return kBounds;  // +Inf
  uint64_t m = (nanos + p - 1) / p;   // 2..10; 10 is the next decade's first bound
  return static_cast<size_t>(e) * kStepsPerDecade + m - 1;
}

double Histogram::quantileSeconds(double q) const {
  uint64_t total = count();
  if (total == 0) return 0;
  auto rank = static_cast<uint64_t>(q * static_cast<double>(total));
  if (rank < 1) rank = 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBounds; ++i) {
    seen += bucketCount(i);
    if (seen >= rank) return upperBoundSeconds(i);
  }
  return upperBoundSeconds(kBounds - 1) * 10;  // beyond the last bound: report "> 10 s"
}

struct Metrics::Family {
  std::string name;
  std::string help;
  Type type;
  struct Series {
    std::string labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
  };
  std::vector<Series> series;
};

Metrics::Metrics() = default;
Metrics::~Metrics() = default;

Metrics::Family& Metrics::family(std::string_view name, std::string_view help, Type type) {
  std::string full(name.starts_with(kPrefix) ? "" : kPrefix);
  full.append(name);
  for (auto& f : families_) {
    if (f->name != full) continue;
    if (f->type != type) {
      // Two layers disagreeing on a metric's type is a programming error caught at startup.
      FLOG_ERROR(log::format("metric %s registered with two types", full.c_str()));
      std::abort();
    }
    return *f;
  }
  auto f = std::make_unique<Family>();
  f->name = std::move(full);
  f->help = std::string(help);
  f->type = type;
  families_.push_back(std::move(f));
  return *families_.back();
}

Counter& Metrics::counter(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = family(name, help, Type::kCounter);
  std::string key = renderLabels(labels);
  for (auto& s : f.series)
    if (s.labels == key) return *s.counter;
  f.series.push_back({std::move(key), std::make_unique<Counter>(), nullptr, nullptr});
  return *f.series.back().counter;
}

Gauge& Metrics::gauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = family(name, help, Type::kGauge);
  std::string key = renderLabels(labels);
  for (auto& s : f.series)
    if (s.labels == key) return *s.gauge;
  f.series.push_back({std::move(key), nullptr, std::make_unique<Gauge>(), nullptr});
  return *f.series.back().gauge;
}

Histogram& Metrics::histogram(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = family(name, help, Type::kHistogram);
  std::string key = renderLabels(labels);
  for (auto& s : f.series)
    if (s.labels == key) return *s.histogram;
  f.series.push_back({std::move(key), nullptr, nullptr, std::make_unique<Histogram>()});
  return *f.series.back().histogram;
}

void Metrics::render(std::string& out) const {
  if (beforeRender_) beforeRender_();
  static const char* const kTypeNames[] = {"counter", "gauge", "histogram"};
  // Bucket bounds are formatted once; every histogram shares them.
  static const std::vector<std::string> kLe = [] {
    std::vector<std::string> le;
    for (size_t i = 0; i < Histogram::kBounds; ++i) {
      std::string s = "le=\"";
      appendDouble(s, Histogram::upperBoundSeconds(i));
      le.push_back(s + "\"");
    }
    le.push_back("le=\"+Inf\"");
    return le;
  }();

  std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    out += "# HELP ";
    out += f->name;
    out.push_back(' ');
    appendEscaped(out, f->help, false);
    out += "\n# TYPE ";
    out += f->name;
    out.push_back(' ');
    out += kTypeNames[static_cast<int>(f->type)];
    out.push_back('\n');
    for (const auto& s : f->series) {
      const std::string& l = s.labels;
      auto sample = [&](std::string_view suffix, std::string_view extra) {
        out += f->name;
        out += suffix;
        if (!l.empty() || !extra.empty()) {
          out += l.empty() ? "{" : l;
          if (!l.empty() && !extra.empty()) out.push_back(',');
          out += extra;
          out.push_back('}');
        }
        out.push_back(' ');
      };
      switch (f->type) {
        case Type::kCounter:
          sample("", "");
          appendUint(out, s.counter->value());
          out.push_back('\n');
          break;
        case Type::kGauge:
          sample("", "");
          appendDouble(out, s.gauge->value());
          out.push_back('\n');
          break;
        case Type::kHistogram: {
          const Histogram& h = *s.histogram;
          uint64_t cumulative = 0;
          for (size_t i = 0; i <= Histogram::kBounds; ++i) {
            cumulative += h.bucketCount(i);
            sample("_bucket", kLe[i]);
            appendUint(out, cumulative);
            out.push_back('\n');
          }
          sample("_sum", "");
          appendDouble(out, h.sumSeconds());
          out.push_back('\n');
          sample("_count", "");
          appendUint(out, cumulative);
          out.push_back('\n');
          break;
        }
      }
    }
  }
}

namespace {

void appendDuration(std::string& out, double seconds) {
  char buf[32];
  if (seconds < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3gus", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.3gms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3gs", seconds);
  out += buf;
}

}  // namespace

void Metrics::renderSummary(std::string& out) const {
  std::lock_guard lock(mu_);
  for (const auto& f : families_) {
    if (f->type != Type::kHistogram) continue;
    for (const auto& s : f->series) {
      const Histogram& h = *s.histogram;
      uint64_t n = h.count();
      if (n == 0) continue;
      out += f->name;
      if (!s.labels.empty()) {
        out += s.labels;
        out.push_back('}');
      }
      out += " n=";
      appendUint(out, n);
      out += " mean=";
      appendDuration(out, h.sumSeconds() / static_cast<double>(n));
      out += " p50<=";
      appendDuration(out, h.quantileSeconds(0.5));
      out += " p99<=";
      appendDuration(out, h.quantileSeconds(0.99));
      out.push_back('\n');
    }
  }
}

}  // namespace fleetsched::engine
