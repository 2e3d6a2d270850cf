// Per-pod decision cost of the placement policies on the openb cluster (1,213 GPU nodes).
//
// BM_Decide/<policy>: the cluster is filled with the first 4,000 pods of the default trace
// (seed 42 order), then one more pod's full cycle (filter → score → pick → GPU choice) is
// timed repeatedly against that state. BM_Experiment/<policy>: one whole replay experiment per
// iteration, with the per-pod latency percentiles the replay measures as counters.
// Needs the trace: FLEETSCHED_OPENB_DIR, else ../shared/data/openb next to the source tree.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "plugins/policies/fgd/frag_cache.h"
#include "plugins/policies/policies.h"
#include "replay/cluster.h"
#include "replay/experiment.h"
#include "replay/pipeline.h"

namespace fleetsched::replay {
namespace {

std::shared_ptr<const TraceData> defaultTrace() {
  static std::shared_ptr<const TraceData> trace = [] {
    std::string dir;
    if (const char* env = std::getenv("FLEETSCHED_OPENB_DIR")) {
      dir = env;
    } else {
      const char* root = std::getenv("FLEETSCHED_SOURCE_ROOT");
      dir = (std::filesystem::path(root != nullptr ? root : ".") / ".." / "shared" / "data" / "openb").string();
    }
    std::vector<NodeRow> nodes;
    std::vector<PodRow> pods;
    std::string error;
    if (!readNodeList(dir + "/openb_node_list_gpu_node.csv", nodes, error) ||
        !readPodList(dir + "/openb_pod_list_default.csv", pods, error)) {
      return std::shared_ptr<const TraceData>{};
    }
    return prepareTrace("default", std::move(nodes), std::move(pods));
  }();
  return trace;
}

const char* const kPolicies[] = {"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "fleet"};

void BM_Decide(benchmark::State& state) {
  const auto trace = defaultTrace();
  if (!trace) {
    state.SkipWithError("openb trace not found (set FLEETSCHED_OPENB_DIR)");
    return;
  }
  const std::string policy = kPolicies[state.range(0)];
  state.SetLabel(policy);
  std::vector<std::string> names;
  for (const auto& n : trace->nodes) names.push_back(n.name);
  Cluster cluster(trace->nodes, names);
  const auto model = plugins::policies::fragModelFor(policy, trace->typical);
  const auto frag = plugins::policies::fragCacheFor(policy, model);
  if (frag) {
    for (const auto& o : trace->objects) frag->observePodClass(podInfoOf(o));
  }
  Pipeline pipeline(plugins::policies::createPolicy(policy, {42, model, frag}, nullptr));
  if (frag) {
    for (uint32_t id = 0; id < cluster.size(); ++id) frag->refresh(cluster.node(id));
  }
  // A deterministic spread of the trace: every second pod, first 4,000 of them.
  size_t next = 0;
  for (size_t placed = 0; placed < 4000 && next < trace->objects.size(); next += 2) {
    const Decision d = pipeline.decide(trace->objects[next], cluster);
    if (d.node < 0) continue;
    cluster.reserve(static_cast<uint32_t>(d.node), d.pod, d.gpus);
    if (frag) frag->refresh(cluster.node(static_cast<uint32_t>(d.node)));
    ++placed;
  }
  const codec::Pod& probe = trace->objects[1];  // a shared-GPU pod (460 milli)
  if (pipeline.decide(probe, cluster).node < 0) {
    state.SkipWithError("probe pod does not fit");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(pipeline.decide(probe, cluster));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["nodes"] = static_cast<double>(cluster.size());
}
BENCHMARK(BM_Decide)->DenseRange(0, 6)->Unit(benchmark::kMicrosecond);

void BM_Experiment(benchmark::State& state) {
  const auto trace = defaultTrace();
  if (!trace) {
    state.SkipWithError("openb trace not found (set FLEETSCHED_OPENB_DIR)");
    return;
  }
  const std::string policy = kPolicies[state.range(0)];
  state.SetLabel(policy);
  ExperimentResult r;
  for (auto _ : state) r = runExperiment(*trace, {policy, 42, 1.3, true, 0});
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * r.attempts));
  state.counters["p50_us"] = r.latencyP50Us;
  state.counters["p99_us"] = r.latencyP99Us;
  state.counters["alloc130"] = r.allocation[130];
}
BENCHMARK(BM_Experiment)->DenseRange(0, 6)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fleetsched::replay

BENCHMARK_MAIN();
