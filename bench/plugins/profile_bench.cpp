// Default profile (GPU 10, Spot 5, Zone 3) over a generated GPU fleet: the per-pod work of one
// extender filter + prioritize, excluding JSON. Fixtures are deterministic; each benchmark
// checks its result before timing.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "plugins/config.h"
#include "plugins/profile.h"

namespace fleetsched::plugins {
namespace {

class BenchCluster final : public ClusterState {
 public:
  uint32_t zoneCount() const override { return 4; }
  void workloadZoneCounts(std::string_view, std::span<uint32_t> perZone) const override {
    perZone[1] += 3;
    perZone[2] += 1;
  }
};

// A fleet like the trace's: 8-GPU nodes (A100/V100/T4 memory sizes), used GPUs in whole and
// shared amounts, three zones, a fifth of the nodes on spot.
struct Fleet {
  explicit Fleet(size_t n) : nodes(n) {
    std::mt19937 rng(42);
    const int32_t memory[] = {81920, 32768, 16384};
    const char* models[] = {"NVIDIA-A100-SXM4-80GB", "V100M32", "Tesla-T4"};
    for (size_t i = 0; i < n; ++i) {
      NodeInfo& x = nodes[i];
      x.id = static_cast<uint32_t>(i);
      x.name = "node";
      const int m = static_cast<int>(rng() % 3);
      x.gpuModel = static_cast<uint16_t>(m + 1);
      x.gpuModelName = models[m];
      x.gpuMemoryMiB = memory[m];
      x.gpuCount = 8;
      for (int g = 0; g < 8; ++g) {
        const uint32_t r = rng() % 10;
        x.gpuUsedMilli[g] = r < 5 ? 0 : r < 8 ? 1000 : static_cast<uint16_t>(250 * (r - 7));
      }
      x.zone = static_cast<uint16_t>(1 + rng() % 3);
      x.capacityType = rng() % 5 == 0 ? CapacityType::Spot : CapacityType::OnDemand;
      x.allocMilliCpu = 96000;
      x.allocMemory = int64_t{768} << 30;
      x.allocPods = 110;
      ptrs.push_back(&nodes[i]);
    }
  }
  std::vector<NodeInfo> nodes;
  std::vector<const NodeInfo*> ptrs;
};

enum PodKind { kTwoGpus, kSharedGpu, kTwoGpusModels };

// kTwoGpus: a 2-GPU training pod; kSharedGpu: a quarter of one GPU; kTwoGpusModels: 2 GPUs of
// two allowed models (fleetsched.io/gpu-models), which exercises the model check.
codec::Pod makePod(PodKind kind) {
  static const codec::OwnerReference owner{"batch/v1", "Job", "train", "uid", true};
  codec::Pod pod;
  pod.name = "p";
  pod.namespace_ = "ml";
  pod.ownerReferences.push_back(owner);
  pod.requests.milliCpu = 8000;
  pod.requests.memory = int64_t{64} << 30;
  pod.requests.scalar.push_back({"nvidia.com/gpu", kind == kSharedGpu ? 1 : 2});
  if (kind == kSharedGpu) pod.annotations.push_back({"fleetsched.io/gpu-milli", "250"});
  if (kind == kTwoGpusModels) pod.annotations.push_back({"fleetsched.io/gpu-models", "NVIDIA-A100-SXM4-80GB|V100M32"});
  return pod;
}

void BM_DefaultProfileFilterScore(benchmark::State& st) {
  const size_t n = static_cast<size_t>(st.range(0));
  const Fleet fleet(n);
  const Config config = defaultConfig();
  const Profile& profile = config.profiles()[0];
  const BenchCluster cluster;
  const codec::Pod pod = makePod(static_cast<PodKind>(st.range(1)));
  CycleState state;
  ProfileScratch scratch;
  // The fleet's rows are built once, as the service keeps them per snapshot.
  ProfileScratch rows;
  const NodeBatch all = rows.batch(fleet.ptrs, profile.gpuResources());
  std::vector<Verdict> verdicts(n);
  std::vector<int32_t> scores(n);

  auto once = [&] {
    profile.runFilter(pod, state, cluster, all, verdicts, scratch);
    const NodeBatch feasible = scratch.feasible(all, verdicts);
    profile.extenderScores(state, cluster, feasible, std::span<int32_t>(scores.data(), feasible.size()), scratch);
    return feasible.size();
  };
  // Check the result first: some nodes pass, some fail, the best node scores 10.
  const size_t feasible = once();
  int32_t best = 0;
  for (size_t i = 0; i < feasible; ++i) best = std::max(best, scores[i]);
  if (feasible == 0 || feasible == n || best != kMaxExtenderScore) {
    std::fprintf(stderr, "unexpected result: %zu of %zu feasible, best %d\n", feasible, n, best);
    std::abort();
  }
  for (auto _ : st) {
    benchmark::DoNotOptimize(once());
    benchmark::ClobberMemory();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * n));
  st.counters["feasible"] = static_cast<double>(feasible);
  st.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}
BENCHMARK(BM_DefaultProfileFilterScore)
    ->ArgNames({"nodes", "pod"})
    ->Args({5000, kTwoGpus})
    ->Args({1000, kTwoGpus})
    ->Args({5000, kSharedGpu})
    ->Args({5000, kTwoGpusModels})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fleetsched::plugins

BENCHMARK_MAIN();
