// Cache benchmarks: pod event ingestion, snapshot acquisition, name lookup, and memory per node
// and per pod, on a generated 5,000-node / 100,000-pod cluster (deterministic).
//
//   ninja -C build bench/cache/cache_bench
//   build/bench/cache/cache_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache.h"
#include "plugins/annotations.h"

// Live heap bytes, counted by usable size, so memory per node and per pod is measured, not
// estimated. Counting is relaxed-atomic: cheap enough not to distort the timings much, and the
// same for every benchmark.
namespace {
std::atomic<int64_t> gLiveBytes{0};
bool gCounting = false;  // only BM_Memory pays for malloc_usable_size
}  // namespace

void* operator new(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (gCounting) gLiveBytes.fetch_add(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  if (gCounting) gLiveBytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}
void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace fleetsched::cache {
namespace {

constexpr int kNodes = 5000;
constexpr int kPods = 100000;

struct Fixture {
  std::deque<std::string> storage;
  std::vector<codec::Node> nodes;
  std::vector<codec::Pod> pods;

  std::string_view keep(std::string s) { return storage.emplace_back(std::move(s)); }

  Fixture() {
    struct Shape {
      const char* product;
      int gpus;
      int memoryMiB;
      const char* instance;
    };
    const Shape shapes[] = {{"NVIDIA-A100-SXM4-80GB", 8, 81920, "p4de.24xlarge"},
                            {"NVIDIA-H100-80GB-HBM3", 8, 81559, "p5.48xlarge"},
                            {"NVIDIA-L4", 4, 23034, "g6.12xlarge"},
                            {"Tesla-T4", 1, 15360, "g4dn.xlarge"},
                            {"NVIDIA-A10G", 4, 23028, "g5.12xlarge"},
                            {"", 0, 0, "m6i.4xlarge"}};
    const char* zones[] = {"us-west-2a", "us-west-2b", "us-west-2c"};
    for (int i = 0; i < kNodes; ++i) {
      const Shape& sh = shapes[i % 6];
      codec::Node n;
      n.name = keep("ip-10-" + std::to_string(i / 250) + "-" + std::to_string(i % 250) + ".us-west-2.compute.internal");
      auto label = [&](const char* k, std::string v) { n.labels.push_back({k, keep(std::move(v))}); };
      // About 32 labels, as EKS + Karpenter + GPU feature discovery put on a GPU node.
      label("kubernetes.io/arch", "amd64");
      label("kubernetes.io/os", "linux");
      label("kubernetes.io/hostname", std::string(n.name));
      label("node.kubernetes.io/instance-type", sh.instance);
      label("topology.kubernetes.io/region", "us-west-2");
      label("topology.kubernetes.io/zone", zones[i % 3]);
      label("topology.k8s.aws/zone-id", "usw2-az" + std::to_string(i % 3 + 1));
      label("karpenter.sh/nodepool", std::string("pool-") + sh.instance);
      label("karpenter.sh/capacity-type", i % 4 == 0 ? "spot" : "on-demand");
      label("karpenter.k8s.aws/instance-family", std::string(sh.instance).substr(0, 4));
      label("karpenter.k8s.aws/instance-size", "12xlarge");
      label("karpenter.k8s.aws/instance-hypervisor", "nitro");
      label("karpenter.sh/registered", "true");
      label("karpenter.sh/initialized", "true");
      label("beta.kubernetes.io/arch", "amd64");
      label("beta.kubernetes.io/os", "linux");
      if (sh.gpus > 0) {
        label("nvidia.com/gpu.present", "true");
        label("nvidia.com/gpu.product", sh.product);
        label("nvidia.com/gpu.memory", std::to_string(sh.memoryMiB));
        label("nvidia.com/gpu.count", std::to_string(sh.gpus));
        label("nvidia.com/gpu.family", "ampere");
        label("nvidia.com/gpu.compute.major", "8");
        label("nvidia.com/gpu.compute.minor", "0");
        label("nvidia.com/gpu.machine", sh.instance);
        label("nvidia.com/gpu.replicas", "1");
        label("nvidia.com/gpu.sharing-strategy", "none");
        label("nvidia.com/gpu.mode", "compute");
        label("nvidia.com/mig.capable", "false");
        label("nvidia.com/cuda.driver-version.full", "550.90.07");
        label("nvidia.com/cuda.driver-version.major", "550");
        label("nvidia.com/cuda.runtime-version.full", "12.4");
        label("nvidia.com/gfd.timestamp", "1767225600");
        n.allocatable.scalar.push_back({"nvidia.com/gpu", sh.gpus});
      }
      n.allocatable.milliCpu = 95000;
      n.allocatable.memory = int64_t{1000} << 30;
      n.allocatable.pods = 737;
      nodes.push_back(std::move(n));
    }
    for (int i = 0; i < kPods; ++i) {
      codec::Pod p;
      char uid[40];
      std::snprintf(uid, sizeof uid, "%08x-1b2c-4d5e-8f90-a1b2c3d4e5f6", 0x6f1c0000U + static_cast<unsigned>(i));
      p.uid = keep(uid);  // 36 characters, like a Kubernetes UID
      p.name = p.uid;
      p.namespace_ = "ml";
      p.phase = codec::PodPhase::Running;
      const int node = (i * 7919) % kNodes;
      p.nodeName = nodes[node].name;
      p.requests.milliCpu = 250;
      p.requests.memory = int64_t{1} << 30;
      p.ownerReferences.push_back({"batch/v1", "Job", keep("job-" + std::to_string(i % 5000)), "u", true});
      if (node % 6 != 5 && i % 3 == 0) {
        p.requests.scalar.push_back({"nvidia.com/gpu", 1});
        if (i % 2 == 0) p.annotations.push_back({plugins::annotations::kGpuMilli, "250"});
      }
      pods.push_back(std::move(p));
    }
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void loadNodes(Cache& cache) {
  auto w = cache.write();
  w.replaceNodes(fixture().nodes);
}

int64_t totalPods(Cache& cache) {
  Reader r(cache);
  Snapshot s = r.acquire();
  int64_t n = 0;
  s.forEachNode([&](const plugins::NodeInfo& node) { n += node.usedPods; });
  return n;
}

// 100,000 pod upserts into a 5,000-node cache, published every `batch` events.
void BM_UpsertPods(benchmark::State& state) {
  const auto& f = fixture();
  const auto batch = static_cast<size_t>(state.range(0));
  {
    // Check the output once before timing: every pod is charged.
    Cache cache;
    loadNodes(cache);
    for (size_t i = 0; i < f.pods.size(); i += batch) {
      auto w = cache.write();
      for (size_t j = i; j < std::min(f.pods.size(), i + batch); ++j) w.upsertPod(f.pods[j]);
    }
    if (totalPods(cache) != kPods) state.SkipWithError("pods not all charged");
  }
  for (auto _ : state) {
    state.PauseTiming();
    auto cache = std::make_unique<Cache>();
    loadNodes(*cache);
    state.ResumeTiming();
    for (size_t i = 0; i < f.pods.size(); i += batch) {
      auto w = cache->write();
      for (size_t j = i; j < std::min(f.pods.size(), i + batch); ++j) w.upsertPod(f.pods[j]);
    }
    state.PauseTiming();
    cache.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kPods);
}
BENCHMARK(BM_UpsertPods)->Arg(1)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The most common watch event: a MODIFIED status update that changes nothing the cache charges
// (lookup by UID, compare, no publish), in batches of 64 as the ingestion sink applies them.
void BM_StatusUpdate(benchmark::State& state) {
  const auto& f = fixture();
  Cache cache;
  loadNodes(cache);
  {
    auto w = cache.write();
    for (const auto& p : f.pods) w.upsertPod(p);
  }
  const uint64_t version = cache.stats().version;
  size_t i = 0;
  for (auto _ : state) {
    auto w = cache.write();
    for (int k = 0; k < 64; ++k) {
      w.upsertPod(f.pods[i]);
      i = (i + 7919) % f.pods.size();
    }
  }
  if (cache.stats().version != version) state.SkipWithError("a no-op status update published");
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_StatusUpdate);

// Steady-state churn: a pod moves to another node, one event per publish.
void BM_PodMoveEvent(benchmark::State& state) {
  const auto& f = fixture();
  Cache cache;
  loadNodes(cache);
  {
    auto w = cache.write();
    for (const auto& p : f.pods) w.upsertPod(p);
  }
  std::vector<codec::Pod> moved(f.pods.begin(), f.pods.begin() + 1000);
  size_t i = 0;
  uint64_t round = 0;
  for (auto _ : state) {
    codec::Pod& p = moved[i];
    p.nodeName = f.nodes[(i * 31 + round) % kNodes].name;
    cache.upsertPod(p);
    if (++i == moved.size()) {
      i = 0;
      ++round;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PodMoveEvent);

void BM_SnapshotAcquire(benchmark::State& state) {
  Cache cache;
  loadNodes(cache);
  Reader reader(cache);
  for (auto _ : state) {
    Snapshot s = reader.acquire();
    benchmark::DoNotOptimize(s.nodeCount());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SnapshotAcquire);

// The same while another thread publishes a pod event every ~20 µs (the 2-core machine's
// second core), so the reader's epoch line and the root pointer are contended.
void BM_SnapshotAcquireWhileWriting(benchmark::State& state) {
  const auto& f = fixture();
  Cache cache;
  loadNodes(cache);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> publishes{0};
  std::thread writer([&] {
    size_t i = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      cache.upsertPod(f.pods[i % 5000]);
      if (i % 5000 == 4999) {
        auto w = cache.write();
        for (size_t j = 0; j < 5000; ++j) w.deletePod(f.pods[j].uid);
      }
      ++i;
      publishes.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  Reader reader(cache);
  for (auto _ : state) {
    Snapshot s = reader.acquire();
    benchmark::DoNotOptimize(s.nodeCount());
  }
  stop = true;
  writer.join();
  state.counters["publishes"] = static_cast<double>(publishes.load());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SnapshotAcquireWhileWriting)->UseRealTime();

// find() of all 5,000 node names (as a NodeNames filter request of the whole cluster does).
void BM_LookupAllNames(benchmark::State& state) {
  const auto& f = fixture();
  Cache cache;
  loadNodes(cache);
  Reader reader(cache);
  std::vector<std::string> names;
  for (const auto& n : f.nodes) names.emplace_back(n.name);  // not the cache's own storage
  {
    Snapshot s = reader.acquire();
    for (const auto& n : names) {
      if (s.find(n) == nullptr || s.find(n)->name != n) state.SkipWithError("lookup failed");
    }
  }
  for (auto _ : state) {
    Snapshot s = reader.acquire();
    for (const auto& n : names) benchmark::DoNotOptimize(s.find(n));
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_LookupAllNames)->Unit(benchmark::kMicrosecond);

// Heap bytes per node (5,000 nodes) and per pod (100,000 pods, one publish per 1,024 events),
// measured as live-byte deltas after reclamation. Timing is meaningless here.
void BM_Memory(benchmark::State& state) {
  const auto& f = fixture();
  gCounting = true;
  for (auto _ : state) {
    const int64_t base = gLiveBytes.load();
    auto cache = std::make_unique<Cache>();
    const int64_t empty = gLiveBytes.load();
    loadNodes(*cache);
    cache->upsertNode(f.nodes[0]);  // one more (no-op) publish so every retired version is freed
    const int64_t withNodes = gLiveBytes.load();
    for (size_t i = 0; i < f.pods.size(); i += 1024) {
      auto w = cache->write();
      for (size_t j = i; j < std::min(f.pods.size(), i + 1024); ++j) w.upsertPod(f.pods[j]);
    }
    {
      auto w = cache->write();  // let the last retired chunks go
      w.upsertNode(f.nodes[0]);
    }
    const int64_t withPods = gLiveBytes.load();
    state.counters["empty_cache_bytes"] = static_cast<double>(empty - base);
    state.counters["bytes_per_node"] = static_cast<double>(withNodes - empty) / kNodes;
    state.counters["bytes_per_pod"] = static_cast<double>(withPods - withNodes) / kPods;
    state.counters["retired_pending"] = static_cast<double>(cache->stats().retiredPending);
    cache.reset();
  }
  gCounting = false;
}
BENCHMARK(BM_Memory)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fleetsched::cache

BENCHMARK_MAIN();
