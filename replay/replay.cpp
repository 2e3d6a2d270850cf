#include "replay/replay.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "plugins/config.h"
#include "plugins/policies/policies.h"
#include "replay/experiment.h"
#include "replay/published.h"

namespace fleetsched::replay {

namespace {

constexpr const char* kNodeFile = "openb_node_list_gpu_node.csv";
const std::vector<std::string> kAnchorTraces = {"default", "cpu100", "gpushare40", "gpuspec10", "multigpu20"};

std::string tracePath(const Options& o, const std::string& trace) {
  if (trace.find('/') != std::string::npos || trace.ends_with(".csv")) return trace;
  return (std::filesystem::path(o.traceDir) / ("openb_pod_list_" + trace + ".csv")).string();
}

std::string traceLabel(const std::string& trace) {
  std::string s = std::filesystem::path(trace).stem().string();
  const std::string prefix = "openb_pod_list_";
  return s.starts_with(prefix) ? s.substr(prefix.size()) : s;
}

std::string fmt(double v, int decimals = 2) {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

void printTable(const std::vector<Summary>& summary) {
  std::printf("%-11s %-10s %4s  %6s %6s %6s  %6s %6s %6s  %5s  %6s %6s %7s %7s %7s %7s\n", "trace", "policy", "runs",
              "@100", "pub", "diff", "@130", "pub", "diff", "frag%", "failed", "s/run", "p50us", "p99us", "cpu50", "cpu99");
  for (const auto& s : summary) {
    std::printf("%-11s %-10s %4zu  %6.2f %6s %6s  %6.2f %6s %6s  %5.1f  %6.0f %6.2f %7.1f %7.1f %7.1f %7.1f\n", s.trace.c_str(),
                s.policy.c_str(), s.runs, s.at100, s.hasPublished ? fmt(s.pub100, 1).c_str() : "-",
                s.hasPublished ? fmt(s.at100 - s.pub100, 2).c_str() : "-", s.at130,
                s.hasPublished ? fmt(s.pub130, 1).c_str() : "-", s.hasPublished ? fmt(s.at130 - s.pub130, 2).c_str() : "-",
                s.frag130, s.failed, s.seconds, s.p50, s.p99, s.cpuP50, s.cpuP99);
  }
}

bool writeOutputs(const Options& o, const std::vector<ExperimentResult>& results, const std::vector<Summary>& summary,
                  std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(o.outDir, ec);
  if (ec) {
    error = o.outDir + ": " + ec.message();
    return false;
  }
  const auto path = [&](const char* f) { return (std::filesystem::path(o.outDir) / f).string(); };
  std::ofstream runs(path("runs.csv")), curves(path("curves.csv")), sum(path("summary.csv")), json(path("summary.json"));
  if (!runs || !curves || !sum || !json) {
    error = o.outDir + ": cannot write the report files";
    return false;
  }
  runs << "trace,policy,seed,attempts,failed,alloc_100,alloc_130,frag_ratio_130,final_frag_ratio,used_milli,"
          "arrived_milli,gpus_touched,total_gpus,seconds,latency_p50_us,latency_p90_us,latency_p99_us,latency_max_us,cpu_p50_us,cpu_p99_us\n";
  curves << "trace,policy,seed,arrival_pct,alloc_pct,frag_ratio_pct\n";
  for (const auto& r : results) {
    runs << r.trace << ',' << r.policy << ',' << r.seed << ',' << r.attempts << ',' << r.failed << ','
         << fmt(r.allocation[100]) << ',' << fmt(r.allocation[130]) << ',' << fmt(r.fragmentation[130]) << ','
         << fmt(r.finalFragRatio) << ',' << r.usedMilli << ',' << r.arrivedMilli << ',' << r.gpusTouched << ','
         << r.totalGpus << ',' << fmt(r.seconds, 3) << ',' << fmt(r.latencyP50Us) << ',' << fmt(r.latencyP90Us) << ','
         << fmt(r.latencyP99Us) << ',' << fmt(r.latencyMaxUs) << ',' << fmt(r.cpuP50Us) << ',' << fmt(r.cpuP99Us) << '\n';
    for (int b = 0; b <= kMaxBin; ++b) {
      if (std::isnan(r.allocation[b])) continue;
      curves << r.trace << ',' << r.policy << ',' << r.seed << ',' << b << ',' << fmt(r.allocation[b]) << ','
             << fmt(r.fragmentation[b]) << '\n';
    }
  }
  sum << "trace,policy,runs,alloc_100,published_100,alloc_130,published_130,spread_100,spread_130,frag_ratio_130,"
         "failed,seconds_per_run,latency_p50_us,latency_p99_us,cpu_p50_us,cpu_p99_us\n";
  json << "{\n  \"tuneRatio\": " << o.tuneRatio << ",\n  \"summary\": [\n";
  for (size_t i = 0; i < summary.size(); ++i) {
    const auto& s = summary[i];
    sum << s.trace << ',' << s.policy << ',' << s.runs << ',' << fmt(s.at100) << ','
        << (s.hasPublished ? fmt(s.pub100, 1) : "") << ',' << fmt(s.at130) << ','
        << (s.hasPublished ? fmt(s.pub130, 1) : "") << ',' << fmt(s.spread100) << ',' << fmt(s.spread130) << ','
        << fmt(s.frag130) << ',' << fmt(s.failed, 1) << ',' << fmt(s.seconds, 3) << ',' << fmt(s.p50) << ','
        << fmt(s.p99) << ',' << fmt(s.cpuP50) << ',' << fmt(s.cpuP99) << '\n';
    json << "    {\"trace\": \"" << s.trace << "\", \"policy\": \"" << s.policy << "\", \"runs\": " << s.runs
         << ", \"alloc100\": " << fmt(s.at100) << ", \"alloc130\": " << fmt(s.at130)
         << ", \"published100\": " << (s.hasPublished ? fmt(s.pub100, 1) : "null")
         << ", \"published130\": " << (s.hasPublished ? fmt(s.pub130, 1) : "null")
         << ", \"spread100\": " << fmt(s.spread100) << ", \"spread130\": " << fmt(s.spread130)
         << ", \"fragRatio130\": " << fmt(s.frag130) << ", \"failed\": " << fmt(s.failed, 1)
         << ", \"secondsPerRun\": " << fmt(s.seconds, 3) << ", \"latencyP50Us\": " << fmt(s.p50)
         << ", \"latencyP99Us\": " << fmt(s.p99) << ", \"cpuP50Us\": " << fmt(s.cpuP50)
         << ", \"cpuP99Us\": " << fmt(s.cpuP99) << "}" << (i + 1 < summary.size() ? "," : "") << "\n";
  }
  json << "  ]\n}\n";
  for (const auto& r : results) {
    if (r.placements.empty()) continue;
    const std::string name = "placements-" + r.trace + "-" + r.policy + "-" + std::to_string(r.seed) + ".txt";
    std::ofstream out((std::filesystem::path(o.outDir) / name).string());
    for (const auto& line : r.placements) out << line << '\n';
    if (!out) {
      error = o.outDir + "/" + name + ": cannot write";
      return false;
    }
  }
  return true;
}

// Runs the plot script; false (after saying why on stderr) when there is no plot. The plot is
// asked for unless --no-plot, so a missing script or matplotlib fails the command: a user who
// wants no plot says so.
bool plot(const Options& o) {
  std::string script = o.plotScript;
  if (script.empty()) {
    const char* root = std::getenv("FLEETSCHED_SOURCE_ROOT");
    script = (std::filesystem::path(root != nullptr ? root : ".") / "replay" / "plot_allocation.py").string();
  }
  if (!std::filesystem::exists(script)) {
    std::fprintf(stderr,
                 "replay: no plot: %s not found (set FLEETSCHED_SOURCE_ROOT or --plot-script, or pass --no-plot); "
                 "the CSVs are written\n",
                 script.c_str());
    return false;
  }
  const std::string cmd = "python3 '" + script + "' '" + o.outDir + "'";
  const int status = std::system(cmd.c_str());
  if (status == 0) return true;
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    // The script's own message (above) names the missing matplotlib.
    std::fprintf(stderr, "replay: no plot: matplotlib is missing; the CSVs are written\n");
  } else {
    std::fprintf(stderr, "replay: plotting failed (%s); the CSVs are written, --no-plot skips the plot\n",
                 cmd.c_str());
  }
  return false;
}

bool writePlans(const Options& o, const std::vector<std::shared_ptr<const TraceData>>& traces, std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(o.planDir, ec);
  if (ec) {
    error = o.planDir + ": " + ec.message();
    return false;
  }
  for (const auto& t : traces) {
    for (uint64_t seed : o.seeds) {
      const ExperimentPlan plan = planExperiment(*t, {"", seed, o.tuneRatio, o.shuffle, o.podLimit});
      const std::string stem = (std::filesystem::path(o.planDir) / (t->name + "-" + std::to_string(seed))).string();
      std::ofstream pods(stem + "-pods.csv"), nodes(stem + "-nodes.csv");
      pods << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
      for (size_t a = 0; a < plan.pods.size(); ++a) {
        const PodRow& p = t->pods[plan.pods[a].row];
        pods << plan.podName(*t, a) << ',' << p.milliCpu << ',' << p.memoryMiB << ',' << p.gpuCount << ','
             << p.gpuMilli << ',' << p.gpuSpec << '\n';
      }
      nodes << "sn,cpu_milli,memory_mib,gpu,model\n";
      for (size_t i = 0; i < t->nodes.size(); ++i) {
        const NodeRow& n = t->nodes[i];
        nodes << plan.nodeNames[i] << ',' << n.milliCpu << ',' << n.memoryMiB << ',' << n.gpuCount << ',' << n.gpuModel
              << '\n';
      }
      if (!pods || !nodes) {
        error = stem + ": cannot write the plan";
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::vector<Summary> summarise(const std::vector<ExperimentResult>& results) {
  // Traces and policies in the order they first appear in the results.
  std::vector<std::string> traces, policies;
  for (const auto& r : results) {
    if (std::find(traces.begin(), traces.end(), r.trace) == traces.end()) traces.push_back(r.trace);
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end()) policies.push_back(r.policy);
  }
  std::vector<Summary> out;
  for (const auto& trace : traces) {
    for (const auto& policy : policies) {
      Summary s;
      s.trace = trace;
      s.policy = policy;
      std::vector<const ExperimentResult*> rs;
      for (const auto& r : results) {
        if (r.trace == trace && r.policy == policy && r.attempts > 0) rs.push_back(&r);
      }
      if (rs.empty()) continue;
      s.runs = rs.size();
      for (const auto* r : rs) {
        s.at100 += r->allocation[100];
        s.at130 += r->allocation[130];
        s.frag130 += r->fragmentation[130];
        s.failed += static_cast<double>(r->failed);
        s.seconds += r->seconds;
        s.p50 += r->latencyP50Us;
        s.p99 += r->latencyP99Us;
        s.cpuP50 += r->cpuP50Us;
        s.cpuP99 += r->cpuP99Us;
      }
      const double k = static_cast<double>(rs.size());
      s.at100 /= k, s.at130 /= k, s.frag130 /= k, s.failed /= k, s.seconds /= k, s.p50 /= k, s.p99 /= k;
      s.cpuP50 /= k, s.cpuP99 /= k;
      for (const auto* r : rs) {
        s.spread100 = std::max(s.spread100, std::abs(r->allocation[100] - s.at100));
        s.spread130 = std::max(s.spread130, std::abs(r->allocation[130] - s.at130));
      }
      if (const PublishedAllocation* pub = findPublished(trace, policy)) {
        s.hasPublished = true;
        s.pub100 = pub->at100;
        s.pub130 = pub->at130;
      }
      out.push_back(s);
    }
  }
  return out;
}

Options withDefaults(Options o) {
  if (o.traceDir.empty()) {
    const char* env = std::getenv("FLEETSCHED_OPENB_DIR");
    o.traceDir = env != nullptr ? env : "";
  }
  if (o.traces.empty()) o.traces = kAnchorTraces;
  if (o.policies.empty() && o.configFile.empty()) {
    for (auto p : plugins::policies::policyNames()) o.policies.emplace_back(p);
  }
  if (o.seeds.empty()) {
    for (uint64_t s = 42; s <= 51; ++s) o.seeds.push_back(s);
  }
  if (o.jobs == 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  return o;
}

std::optional<std::vector<ExperimentResult>> runExperiments(const Options& options, std::string& error) {
  const Options o = withDefaults(options);
  if (o.traceDir.empty() && o.nodeFile.empty()) {
    error = "no trace folder: pass --trace-dir or set FLEETSCHED_OPENB_DIR";
    return std::nullopt;
  }
  std::vector<NodeRow> nodes;
  const std::string nodeFile = o.nodeFile.empty() ? (std::filesystem::path(o.traceDir) / kNodeFile).string() : o.nodeFile;
  if (!readNodeList(nodeFile, nodes, error)) return std::nullopt;
  std::vector<std::shared_ptr<const TraceData>> traces;
  for (const auto& t : o.traces) {
    std::vector<PodRow> pods;
    if (!readPodList(tracePath(o, t), pods, error)) return std::nullopt;
    traces.push_back(prepareTrace(traceLabel(t), nodes, std::move(pods)));
  }
  if (!o.planDir.empty() && !writePlans(o, traces, error)) return std::nullopt;

  struct Job {
    const TraceData* trace;
    ExperimentSpec spec;
  };
  // Built-in policies, then the config's profiles.
  std::vector<std::pair<std::string, std::shared_ptr<const std::string>>> policies;
  for (const auto& p : o.policies) policies.emplace_back(p, nullptr);
  if (!o.configFile.empty()) {
    auto text = std::make_shared<std::string>();
    auto config = plugins::loadConfigFile(o.configFile, error, text.get());
    if (!config) return std::nullopt;
    for (const auto& profile : config->profiles()) {
      const std::string name(profile.name());
      for (auto builtIn : plugins::policies::policyNames()) {
        if (name == builtIn) {
          error = o.configFile + ": profile \"" + name + "\" has a built-in policy's name; rename it";
          return std::nullopt;
        }
      }
      policies.emplace_back(name, text);
    }
  }
  std::vector<Job> jobs;
  for (const auto& t : traces) {
    for (const auto& [p, config] : policies) {
      for (uint64_t seed : o.seeds) jobs.push_back({t.get(), {p, seed, o.tuneRatio, o.shuffle, o.podLimit, config}});
    }
  }
  std::vector<ExperimentResult> results(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex progressMutex;
  size_t done = 0;
  const bool bar = o.progress && isatty(STDERR_FILENO);
  const auto started = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      results[i] = runExperiment(*jobs[i].trace, jobs[i].spec, o.writePlacements);
      std::lock_guard lock(progressMutex);
      ++done;
      if (bar) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const int width = 30, filled = static_cast<int>(width * done / jobs.size());
        std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu runs, %.0f s  ", filled, "##############################",
                     width - filled, "", done, jobs.size(), elapsed);
        if (done == jobs.size()) std::fprintf(stderr, "\n");
      }
    }
  };
  std::vector<std::thread> threads;
  const unsigned n = std::min<unsigned>(o.jobs, static_cast<unsigned>(jobs.size()));
  for (unsigned i = 0; i < n; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return results;
}

int runCommand(const Options& options) {
  const Options o = withDefaults(options);
  std::string error;
  for (const auto& p : o.policies) {
    if (!plugins::policies::createPolicy(p, {}, &error)) {
      std::fprintf(stderr, "replay: %s\n", error.c_str());
      return 2;
    }
  }
  const auto results = runExperiments(o, error);
  if (!results) {
    std::fprintf(stderr, "replay: %s\n", error.c_str());
    return o.traceDir.empty() && o.nodeFile.empty() ? 2 : 1;
  }
  const auto summary = summarise(*results);
  printTable(summary);
  if (!writeOutputs(o, *results, summary, error)) {
    std::fprintf(stderr, "replay: %s\n", error.c_str());
    return 1;
  }
  std::printf("wrote %s/{runs,curves,summary}.csv, summary.json\n", o.outDir.c_str());
  if (o.plot && !plot(o)) return 1;
  return 0;
}

}  // namespace fleetsched::replay
