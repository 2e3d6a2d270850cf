// The load generator's reports (loadgen.h): the table on stdout, the JSON file and the SVG
// percentile plot.
#include "tools/loadgen/loadgen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "tools/fleet/fleet_gen.h"

namespace fleetsched::tools::loadgen {

namespace {

std::string micros(uint64_t ns) {
  char buf[32];
  const double us = static_cast<double>(ns) / 1e3;
  if (us < 1000) {
    std::snprintf(buf, sizeof buf, "%.0f µs", us);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
  }
  return buf;
}

constexpr double kPercentiles[] = {50, 90, 99, 99.9};

}  // namespace

std::string formatTable(const LoadgenOptions& o, const LoadgenResult& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "target %s  mode %s  %s  %d conn × depth %d  %.1f s measured\n",
                o.target.c_str(), o.mode == ArgsMode::kFull ? "full-nodes" : "nodenames",
                o.rate > 0 ? ("open loop " + std::to_string(static_cast<long long>(o.rate)) + " pods/s").c_str()
                           : "closed loop",
                o.connections, o.depth, r.seconds);
  out += line;
  std::snprintf(line, sizeof line, "pods/s %.0f  requests %llu  errors %llu  sent %.1f MB/s\n", r.podsPerSecond(),
                static_cast<unsigned long long>(r.requests),
                static_cast<unsigned long long>(r.filter.errors + r.prioritize.errors + r.bind.errors),
                r.seconds > 0 ? static_cast<double>(r.bytesSent) / 1e6 / (r.seconds + o.warmup) : 0.0);
  out += line;
  if (o.churn) {
    std::snprintf(line, sizeof line,
                  "churn: pods/s counts bound pods; unschedulable %llu; API server: bound %llu, deleted %llu, "
                  "Bindings refused %llu, bound and live at the end %llu\n",
                  static_cast<unsigned long long>(r.podsUnschedulable), static_cast<unsigned long long>(r.apiPodsBound),
                  static_cast<unsigned long long>(r.apiPodsDeleted),
                  static_cast<unsigned long long>(r.apiBindingsRefused), static_cast<unsigned long long>(r.apiLiveBound));
    out += line;
  }
  if (r.podsWithoutPrioritize > 0) {
    std::snprintf(line, sizeof line, "pods filter left with one node or none (no prioritize, not in pods/s): %llu\n",
                  static_cast<unsigned long long>(r.podsWithoutPrioritize));
    out += line;
  }
  std::snprintf(line, sizeof line, "%-12s %9s %10s %10s %10s %10s %10s %10s\n", "latency", "count", "p50", "p90",
                "p99", "p99.9", "max", "mean");
  out += line;
  auto row = [&](const char* name, const VerbResult& v) {
    std::snprintf(line, sizeof line, "%-12s %9llu %10s %10s %10s %10s %10s %10s\n", name,
                  static_cast<unsigned long long>(v.latency.count()), micros(v.latency.percentile(50)).c_str(),
                  micros(v.latency.percentile(90)).c_str(), micros(v.latency.percentile(99)).c_str(),
                  micros(v.latency.percentile(99.9)).c_str(), micros(v.latency.max()).c_str(),
                  micros(static_cast<uint64_t>(v.latency.mean())).c_str());
    out += line;
  };
  row("filter", r.filter);
  if (!o.filterOnly) row("prioritize", r.prioritize);
  if (o.churn) row("bind", r.bind);
  row("pod", r.pod);
  return out;
}

std::string formatJson(const LoadgenOptions& o, const LoadgenResult& r) {
  std::string out = "{";
  auto str = [&](const char* k, const std::string& v) {
    out += "\"";
    out += k;
    out += "\":";
    fleet::appendJsonString(out, v);
    out += ",";
  };
  auto num = [&](const char* k, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "\"%s\":%.6g,", k, v);
    out += buf;
  };
  str("label", o.label.empty() ? o.target : o.label);
  str("target", o.target);
  str("mode", o.mode == ArgsMode::kFull ? "full" : "nodenames");
  str("loop", o.rate > 0 ? "open" : "closed");
  str("prioritizeNodes", o.prioritizeAllNodes ? "all" : "feasible");
  num("rate", o.rate);
  num("connections", o.connections);
  num("depth", o.depth);
  num("seconds", r.seconds);
  num("pods", static_cast<double>(r.pods));
  num("podsPerSecond", r.podsPerSecond());
  num("requests", static_cast<double>(r.requests));
  num("bytesSent", static_cast<double>(r.bytesSent));
  num("bytesReceived", static_cast<double>(r.bytesReceived));
  num("reconnects", static_cast<double>(r.reconnects));
  num("podsWithoutPrioritize", static_cast<double>(r.podsWithoutPrioritize));
  out += o.churn ? "\"churn\":true," : "\"churn\":false,";
  num("podsUnschedulable", static_cast<double>(r.podsUnschedulable));
  num("apiPodsBound", static_cast<double>(r.apiPodsBound));
  num("apiPodsDeleted", static_cast<double>(r.apiPodsDeleted));
  num("apiBindingsRefused", static_cast<double>(r.apiBindingsRefused));
  num("apiLiveBound", static_cast<double>(r.apiLiveBound));
  out += "\"verbs\":{";
  auto verb = [&](const char* name, const VerbResult& v, bool last) {
    out += "\"";
    out += name;
    out += "\":{";
    num("count", static_cast<double>(v.latency.count()));
    num("errors", static_cast<double>(v.errors));
    num("meanUs", v.latency.mean() / 1e3);
    num("minUs", static_cast<double>(v.latency.min()) / 1e3);
    num("maxUs", static_cast<double>(v.latency.max()) / 1e3);
    for (double p : kPercentiles) {
      char key[16];
      std::snprintf(key, sizeof key, "p%gUs", p);
      num(key, static_cast<double>(v.latency.percentile(p)) / 1e3);
    }
    // The percentile spectrum for plots: q = 1 - 10^-x for x in [0, 4].
    out += "\"spectrum\":[";
    for (int i = 0; i <= 80; ++i) {
      double q = 100.0 * (1.0 - std::pow(10.0, -i / 20.0));
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s[%.6g,%.6g]", i ? "," : "", q,
                    static_cast<double>(v.latency.percentile(q)) / 1e3);
      out += buf;
    }
    out += "]}";
    if (!last) out += ",";
  };
  verb("filter", r.filter, false);
  verb("prioritize", r.prioritize, false);
  verb("bind", r.bind, false);
  verb("pod", r.pod, true);
  out += "}}\n";
  return out;
}

std::string formatSvg(const LoadgenOptions& o, const LoadgenResult& r) {
  // Percentile spectrum: x = log10(1/(1-q)) from 0 (p0) to 4 (p99.99), y = latency.
  constexpr double kW = 720, kH = 420, kL = 70, kR = 20, kT = 40, kB = 50;
  const VerbResult* series[] = {&r.filter, &r.prioritize, &r.pod};
  const char* names[] = {"filter", "prioritize", "pod (filter+prioritize)"};
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c"};
  double yMax = 1;
  for (auto* s : series) yMax = std::max(yMax, static_cast<double>(s->latency.percentile(99.99)) / 1e3);
  // Round the axis up to 1, 2 or 5 × 10^k.
  double mag = std::pow(10.0, std::floor(std::log10(yMax)));
  double top = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= yMax) {
      top = m * mag;
      break;
    }
  }
  auto X = [&](double x) { return kL + x / 4.0 * (kW - kL - kR); };
  auto Y = [&](double us) { return kH - kB - us / top * (kH - kT - kB); };
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                kW, kH);
  out += buf;
  std::string title = (o.label.empty() ? o.target : o.label) + " — " +
                      (o.mode == ArgsMode::kFull ? "full Nodes" : "NodeNames") + ", " +
                      std::to_string(static_cast<long long>(r.podsPerSecond())) + " pods/s";
  out += "<text x=\"" + std::to_string(static_cast<int>(kL)) + "\" y=\"22\" font-size=\"14\">";
  out += title + "</text>\n";
  const char* ticks[] = {"p0", "p90", "p99", "p99.9", "p99.99"};
  for (int i = 0; i <= 4; ++i) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                  X(i), Y(0), X(i), Y(top), X(i), kH - kB + 18, ticks[i]);
    out += buf;
  }
  for (int i = 0; i <= 5; ++i) {
    double us = top * i / 5;
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                  X(0), Y(us), X(4), Y(us), kL - 6, Y(us) + 4, micros(static_cast<uint64_t>(us * 1e3)).c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">percentile</text>\n",
                (kL + kW - kR) / 2, kH - 12);
  out += buf;
  for (int s = 0; s < 3; ++s) {
    if (series[s]->latency.count() == 0) continue;
    out += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"";
    out += colors[s];
    out += "\" points=\"";
    for (int i = 0; i <= 80; ++i) {
      double x = i / 20.0;
      double us = static_cast<double>(series[s]->latency.percentile(100.0 * (1 - std::pow(10.0, -x)))) / 1e3;
      std::snprintf(buf, sizeof buf, "%.1f,%.1f ", X(x), Y(std::min(us, top)));
      out += buf;
    }
    out += "\"/>\n";
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"3\" fill=\"%s\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                  kL + 12, kT + 8 + 16.0 * s, colors[s], kL + 30, kT + 12 + 16.0 * s, names[s]);
    out += buf;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace fleetsched::tools::loadgen
