#include "replay/experiment.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>

#include "plugins/annotations.h"
#include "plugins/config.h"
#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/policies.h"
#include "replay/cluster.h"
#include "replay/pipeline.h"

namespace fleetsched::replay {

namespace {

// Seeded source of the run's random choices: order shuffle, tuning draws, node-name prefixes.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) { engine_(); }  // one draw right after seeding
  // Uniform in [0, n), unbiased.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = engine_();
    while (x >= limit);
    return x % n;
  }

 private:
  std::mt19937_64 engine_;
};

int64_t totalMilli(const PodRow& p) { return int64_t{p.gpuCount} * p.gpuMilli; }

}  // namespace

namespace {

double threadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

double roundTo2(double x) { return std::nearbyint(x * 100) / 100; }

std::shared_ptr<const TraceData> prepareTrace(std::string name, std::vector<NodeRow> nodes, std::vector<PodRow> pods) {
  auto t = std::make_shared<TraceData>();
  t->name = std::move(name);
  std::erase_if(nodes, [](const NodeRow& n) { return n.gpuCount == 0; });
  std::sort(nodes.begin(), nodes.end(), [](const NodeRow& a, const NodeRow& b) { return a.name < b.name; });
  std::stable_sort(pods.begin(), pods.end(), [](const PodRow& a, const PodRow& b) { return a.name < b.name; });
  t->nodes = std::move(nodes);
  t->pods = std::move(pods);

  for (const auto& p : t->pods) t->typical.observe({p.milliCpu, p.gpuMilli, p.gpuCount, p.gpuCount > 0 ? p.gpuSpec : "", p.memoryMiB << 20});
  t->typicalPods = std::make_shared<plugins::policies::FragModel>(t->typical.classes());

  // Annotation values first (their storage must not move once objects view it).
  t->annotationValues.reserve(t->pods.size());
  for (const auto& p : t->pods) t->annotationValues.push_back(std::to_string(p.gpuMilli));
  t->objects.resize(t->pods.size());
  for (size_t i = 0; i < t->pods.size(); ++i) {
    const PodRow& p = t->pods[i];
    codec::Pod& o = t->objects[i];
    o.name = p.name;
    o.namespace_ = "default";
    o.phase = codec::PodPhase::Pending;
    o.requests.milliCpu = p.milliCpu;
    o.requests.memory = p.memoryMiB << 20;
    if (p.gpuCount > 0) {
      o.requests.scalar.push_back({kGpuResource, p.gpuCount});
      if (p.gpuMilli < plugins::kMilliPerGpu) o.annotations.push_back({plugins::annotations::kGpuMilli, t->annotationValues[i]});
      if (!p.gpuSpec.empty()) o.annotations.push_back({plugins::annotations::kGpuModels, p.gpuSpec});
    }
  }
  return t;
}

ExperimentPlan planExperiment(const TraceData& trace, const ExperimentSpec& spec) {
  ExperimentPlan plan;
  Rng rng(spec.seed);
  // Order: name order, then one uniform shuffle.
  const uint32_t n = static_cast<uint32_t>(trace.pods.size());
  std::vector<PlannedPod>& order = plan.pods;
  order.reserve(n * 2);
  for (uint32_t i = 0; i < n; ++i) order.push_back({i, -1});
  if (spec.shuffle) {
    for (uint32_t i = n; i-- > 1;) std::swap(order[i], order[rng.below(i + 1)]);
  }
  // Tune to tuneRatio × capacity. The stop test adds the per-GPU share, not the total.
  int64_t capacity = 0;
  for (const auto& node : trace.nodes) capacity += int64_t{node.gpuCount} * plugins::kMilliPerGpu;
  if (spec.tuneRatio > 0 && n > 0) {
    const double target = spec.tuneRatio * static_cast<double>(capacity);
    int64_t total = 0;
    for (const auto& p : trace.pods) total += totalMilli(p);
    if (static_cast<double>(total) < target) {
      for (int32_t clone = 0;; ++clone) {
        const auto row = static_cast<uint32_t>(rng.below(n));
        if (static_cast<double>(total + trace.pods[row].gpuMilli) > target) break;
        total += totalMilli(trace.pods[row]);
        order.push_back({row, clone});
      }
    } else {
      while (static_cast<double>(total) > target && !order.empty()) {
        const size_t at = rng.below(order.size());
        total -= totalMilli(trace.pods[order[at].row]);
        order.erase(order.begin() + static_cast<std::ptrdiff_t>(at));
      }
    }
  }
  if (spec.podLimit > 0 && order.size() > spec.podLimit) order.resize(spec.podLimit);
  // Node names: a seeded 4-digit prefix from a random permutation.
  std::vector<uint32_t> perm(trace.nodes.size());
  for (uint32_t i = 0; i < perm.size(); ++i) {
    const auto j = static_cast<uint32_t>(rng.below(i + 1));
    perm[i] = perm[j];
    perm[j] = i;
  }
  plan.nodeNames.resize(trace.nodes.size());
  for (size_t i = 0; i < plan.nodeNames.size(); ++i) {
    char prefix[16];
    std::snprintf(prefix, sizeof(prefix), "%04u-", perm[i]);
    plan.nodeNames[i].assign(prefix).append(trace.nodes[i].name);
  }
  return plan;
}

std::string ExperimentPlan::podName(const TraceData& trace, size_t attempt) const {
  const PlannedPod e = pods[attempt];
  std::string name = trace.pods[e.row].name;
  if (e.clone >= 0) name.append("-tuned-").append(std::to_string(e.clone));
  return name;
}

ExperimentResult runExperiment(const TraceData& trace, const ExperimentSpec& spec, bool recordPlacements) {
  const auto started = std::chrono::steady_clock::now();
  ExperimentResult res;
  res.trace = trace.name;
  res.policy = spec.policy;
  res.seed = spec.seed;

  ExperimentPlan plan = planExperiment(trace, spec);
  int64_t capacity = 0;
  for (const auto& node : trace.nodes) capacity += int64_t{node.gpuCount} * plugins::kMilliPerGpu;
  Cluster cluster(trace.nodes, std::move(plan.nodeNames));

  // FGD-style policies share their fragmentation cache with the driver, which refreshes it after
  // each Reserve as a server's cache writer would after a watch event, so decisions only read
  // memoised scores.
  std::shared_ptr<plugins::policies::FragCache> frag;
  std::optional<plugins::Config> config;  // a user's profile: its own instance per experiment
  std::optional<Pipeline> pipeline;
  std::string error;
  if (spec.config) {
    // Plugins that learn (FGD, Fleet: typical pods online) keep state, so every experiment
    // builds its own from the text.
    config = plugins::loadConfig(*spec.config, error);
    const plugins::Profile* profile = config ? config->find(spec.policy) : nullptr;
    if (profile == nullptr) {
      std::fprintf(stderr, "replay: profile %s: %s\n", spec.policy.c_str(), config ? "not in the config" : error.c_str());
      return res;
    }
    pipeline.emplace(*profile);
  } else {
    const auto model = plugins::policies::fragModelFor(spec.policy, trace.typical);
    frag = plugins::policies::fragCacheFor(spec.policy, model);
    if (frag) {
      for (const auto& object : trace.objects) frag->observePodClass(podInfoOf(object));
      for (uint32_t id = 0; id < cluster.size(); ++id) frag->refresh(cluster.node(id));
    }
    plugins::policies::PolicyArgs args{spec.seed, model, frag};
    auto policy = plugins::policies::createPolicy(spec.policy, args, &error);
    if (!policy) {
      std::fprintf(stderr, "replay: %s\n", error.c_str());
      return res;
    }
    pipeline.emplace(std::move(policy));
  }

  // Cluster fragmentation, kept up to date per placement (only the placed node changes).
  // The metric always measures with the published typical pods.
  plugins::policies::FragCache metric(trace.typicalPods);
  std::vector<double> nodeFrag(cluster.size());
  double fragSum = 0;
  for (uint32_t id = 0; id < cluster.size(); ++id) {
    nodeFrag[id] = metric.fragmentationOf(metric.stateOf(cluster.node(id)));
    fragSum += nodeFrag[id];
  }

  const size_t attempts = plan.pods.size();
  std::vector<float> latency, cpuLatency;
  latency.reserve(attempts);
  cpuLatency.reserve(attempts);
  std::array<double, kMaxBin + 2> allocSum{}, fragSumBin{};
  std::array<uint32_t, kMaxBin + 2> binCount{};
  const double totalGpus = static_cast<double>(capacity) / plugins::kMilliPerGpu;
  int64_t arrived = 0;
  std::string cloneName;
  for (size_t a = 0; a < attempts; ++a) {
    const PlannedPod e = plan.pods[a];
    codec::Pod pod = trace.objects[e.row];
    if (e.clone >= 0) {
      cloneName = plan.podName(trace, a);
      pod.name = cloneName;
    }
    const double c0 = threadCpuUs();
    const auto t0 = std::chrono::steady_clock::now();
    const Decision d = pipeline->decide(pod, cluster);
    const auto t1 = std::chrono::steady_clock::now();
    cpuLatency.push_back(static_cast<float>(threadCpuUs() - c0));
    latency.push_back(std::chrono::duration<float, std::micro>(t1 - t0).count());

    arrived += d.pod.gpuTotalMilli();
    if (d.node >= 0) {
      const auto id = static_cast<uint32_t>(d.node);
      cluster.reserve(id, d.pod, d.gpus);
      if (frag) frag->refresh(cluster.node(id));
      const double f = metric.fragmentationOf(metric.stateOf(cluster.node(id)));
      fragSum += f - nodeFrag[id];
      nodeFrag[id] = f;
    } else {
      ++res.failed;
    }
    if (recordPlacements) {
      std::string line(pod.name);
      line += " -> ";
      if (d.node < 0) {
        line += "-";
      } else {
        line += cluster.node(static_cast<uint32_t>(d.node)).name;
        for (int g = 0; g < d.gpus.count; ++g) line.append(g == 0 ? " " : ",").append(std::to_string(d.gpus.index[g]));
      }
      res.placements.push_back(std::move(line));
    }
    const double arrivePct = static_cast<double>(arrived) / totalGpus / 10;
    const int bin = static_cast<int>(std::nearbyint(arrivePct));
    if (bin >= 0 && bin <= kMaxBin + 1) {
      const int64_t idle = capacity - cluster.gpuUsedMilli();
      allocSum[bin] += roundTo2(static_cast<double>(cluster.gpuUsedMilli()) / totalGpus / 10);
      fragSumBin[bin] += idle > 0 ? 100 * fragSum / static_cast<double>(idle) : 0;
      ++binCount[bin];
    }
  }
  for (int b = 0; b <= kMaxBin; ++b) {
    double s = allocSum[b], f = fragSumBin[b];
    uint32_t c = binCount[b];
    if (c == 0) {  // the reference falls back to the attempts of the neighbouring bins
      for (int nb : {b - 1, b + 1}) {
        if (nb < 0) continue;
        s += allocSum[nb];
        f += fragSumBin[nb];
        c += binCount[nb];
      }
    }
    res.allocation[b] = c == 0 ? std::nan("") : roundTo2(s / c);
    res.fragmentation[b] = c == 0 ? std::nan("") : f / c;
  }

  res.attempts = attempts;
  res.capacityMilli = capacity;
  res.arrivedMilli = arrived;
  res.usedMilli = cluster.gpuUsedMilli();
  res.gpusTouched = cluster.gpusTouched();
  res.totalGpus = capacity / plugins::kMilliPerGpu;
  const int64_t idle = capacity - res.usedMilli;
  res.finalFragMilli = fragSum;
  res.finalFragRatio = idle > 0 ? 100 * fragSum / static_cast<double>(idle) : 0;
  if (!latency.empty()) {
    auto pct = [](std::vector<float>& v, double q) {
      const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
      return static_cast<double>(v[k]);
    };
    res.latencyP50Us = pct(latency, 0.50);
    res.latencyP90Us = pct(latency, 0.90);
    res.latencyP99Us = pct(latency, 0.99);
    res.latencyMaxUs = *std::max_element(latency.begin(), latency.end());
    res.cpuP50Us = pct(cpuLatency, 0.50);
    res.cpuP99Us = pct(cpuLatency, 0.99);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

}  // namespace fleetsched::replay
