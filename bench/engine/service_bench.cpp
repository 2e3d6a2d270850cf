// The extender service alone, in process: a generated 5,000-node fleet in the cache and the
// load generator's pod mix, each pod's filter (every node name) then prioritize (the names its
// filter kept, skipped when one or none is left, as kube-scheduler does) in NodeNames mode,
// handed to ExtenderService::handleBatch one request per batch. No sockets, no HTTP: what one
// pod costs the reactor's core on top of the transport, without the loopback's noise.
// Argument 0: the names in kube-scheduler's order, different for every pod (as the load
// generator sends them, tools/loadgen/kube_order.h); 1: one list in fleet order for every pod.
//   ninja -C build bench/engine/service_bench && build/bench/engine/service_bench
// Fleet options follow `gen-fleet -n 5000 -p 256` (FLEETSCHED_BENCH_NODES overrides the size).
// BM_FullNodes*: full-Nodes mode, 16 of the pods, each asking about the fleet's first
// kFullNodes Node objects (~12 KB each, the same objects every time, as kube-scheduler sends an
// unchanged node), filter and prioritize with the same body.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "cache/file_source.h"
#include "engine/reactor/metrics.h"
#include "engine/service/extender_service.h"
#include "plugins/config.h"
#include "tools/fleet/fleet_gen.h"
#include "tools/loadgen/kube_order.h"

namespace fleetsched::engine {
namespace {

namespace fs = std::filesystem;
namespace fleet = tools::fleet;

// One padded request body, as the reactor hands it over.
struct Body {
  std::string bytes;  // body + kBodyPadding zero bytes
  size_t size = 0;
  void set(std::string b) {
    size = b.size();
    bytes = std::move(b);
    bytes.append(kBodyPadding, '\0');
  }
  std::string_view view() const { return {bytes.data(), size}; }
};

struct Fixture {
  plugins::Config config = plugins::defaultConfig();
  cache::Cache cache{config.interpretation()};  // as serve builds it
  Metrics metrics;
  std::unique_ptr<ExtenderService> service;
  struct Pods {
    std::vector<Body> filters;
    std::vector<Body> prioritizes;  // empty body: the pod's filter kept one node or none
  };
  Pods orders[2];  // kube-scheduler's order, repeated list
  size_t nodes = 0;

  // One request reused pod after pod, as the reactor reuses a connection's slot. Returns the
  // reply's size; `reply` gets a copy when asked for.
  ExtenderRequest slot;
  size_t call(Verb verb, const Body& body, std::string* reply = nullptr) {
    slot.verb = verb;
    slot.body = body.view();
    ExtenderRequest* batch[] = {&slot};
    service->handleBatch(batch);
    if (slot.status != 200) {
      std::fprintf(stderr, "service_bench: %s answered %d: %s\n", std::string(verbName(verb)).c_str(), slot.status,
                   slot.response.str().c_str());
      std::abort();
    }
    const size_t size = slot.response.size();
    if (reply != nullptr) *reply = slot.response.str();
    slot.response.clear();
    return size;
  }
};

// The NodeNames array's content (between the brackets) of a filter reply, and its length.
std::string_view keptList(std::string_view reply, size_t& count) {
  constexpr std::string_view key = R"("NodeNames":[)";
  const size_t open = reply.find(key);
  const size_t close = reply.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) std::abort();
  std::string_view list = reply.substr(open + key.size(), close - open - key.size());
  count = list.empty() ? 0 : 1;
  for (char c : list) count += c == ',';  // generated names hold no commas
  return list;
}

fleet::FleetOptions fleetOptions() {
  fleet::FleetOptions fo;
  fo.nodes = 5000;
  if (const char* n = std::getenv("FLEETSCHED_BENCH_NODES")) fo.nodes = std::strtoul(n, nullptr, 10);
  fo.minNodeBytes = 10240;
  fo.maxNodeBytes = 13312;
  return fo;
}

Fixture& fixture() {
  static Fixture* f = [] {
    auto* fx = new Fixture;
    const fleet::FleetOptions fo = fleetOptions();
    fleet::FleetGenerator gen(fo);
    fx->nodes = gen.size();
    const fs::path path = fs::temp_directory_path() / ("fleetsched-service-bench-" + std::to_string(::getpid()) + ".json");
    std::FILE* out = std::fopen(path.c_str(), "w");
    if (out == nullptr || !fleet::writeNodeList(out, gen, fleet::JsonValue::Style::kWire)) std::abort();
    std::fclose(out);
    std::string error;
    const bool loaded = cache::loadNodesFile(fx->cache, path.string(), error);
    fs::remove(path);
    if (!loaded) {
      std::fprintf(stderr, "service_bench: %s\n", error.c_str());
      std::abort();
    }
    ServiceOptions so;
    // The cost of recording decisions for /debug/pods (serve --debug-decisions N): 0, off, by default.
    if (const char* n = std::getenv("FLEETSCHED_BENCH_DEBUG_DECISIONS")) so.debugDecisions = std::strtoul(n, nullptr, 10);
    fx->service = std::make_unique<ExtenderService>(fx->cache, fx->config, fx->metrics, so);

    fleet::PodOptions po;
    po.pods = 256;
    po.seed = fo.seed;
    fleet::PodGenerator pods(po);
    std::vector<std::string> names;
    std::vector<std::string_view> zoneOf;
    for (const auto& s : gen.summaries()) {
      names.push_back(s.name);
      zoneOf.push_back(s.zone);
    }
    const std::vector<uint32_t> snapshotOrder = tools::loadgen::kubeZoneRoundRobin(zoneOf);
    std::mt19937_64 rng(fo.seed);
    for (int order = 0; order < 2; ++order) {
      Fixture::Pods& p = fx->orders[order];
      for (size_t i = 0; i < pods.size(); ++i) {
        std::vector<std::string> list = names;
        if (order == 0) {
          list.clear();
          for (uint32_t at : tools::loadgen::kubeFilterOrder(names.size(), 0, names.size(), 16, rng)) {
            list.push_back(names[snapshotOrder[at]]);
          }
        }
        const std::string pod = pods.podWire(i);
        Body& filter = p.filters.emplace_back();
        filter.set(std::string(fleet::kNodeNamesArgsHead) + pod + fleet::nodeNamesArgsTail(list));
        size_t kept = 0;
        std::string reply;
        fx->call(Verb::Filter, filter, &reply);
        const std::string_view kepts = keptList(reply, kept);
        Body& prioritize = p.prioritizes.emplace_back();
        if (kept > 1) {
          prioritize.set(std::string(fleet::kNodeNamesArgsHead) + pod + R"(,"Nodes":null,"NodeNames":[)" +
                         std::string(kepts) + "]}");
        }
      }
    }
    return fx;
  }();
  return *f;
}

// Filter then prioritize per pod, pod after pod: the path kube-scheduler drives.
void BM_NodeNamesPod(benchmark::State& state) {
  Fixture& f = fixture();
  const Fixture::Pods& p = f.orders[state.range(0)];
  size_t k = 0, bytes = 0;
  for (auto _ : state) {
    bytes += f.call(Verb::Filter, p.filters[k]);
    if (p.prioritizes[k].size != 0) bytes += f.call(Verb::Prioritize, p.prioritizes[k]);
    k = (k + 1) % p.filters.size();
  }
  state.counters["nodes"] = static_cast<double>(f.nodes);
  state.counters["pods/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["reply_bytes/pod"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_NodeNamesPod)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Each verb alone (prioritize after its own pod's filter, untimed, as kube-scheduler calls it).
void BM_NodeNamesFilter(benchmark::State& state) {
  Fixture& f = fixture();
  const Fixture::Pods& p = f.orders[state.range(0)];
  size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.call(Verb::Filter, p.filters[k]));
    k = (k + 1) % p.filters.size();
  }
}
BENCHMARK(BM_NodeNamesFilter)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_NodeNamesPrioritize(benchmark::State& state) {
  Fixture& f = fixture();
  const Fixture::Pods& p = f.orders[state.range(0)];
  size_t k = 0;
  for (auto _ : state) {
    while (p.prioritizes[k].size == 0) k = (k + 1) % p.filters.size();
    state.PauseTiming();
    f.call(Verb::Filter, p.filters[k]);
    state.ResumeTiming();
    benchmark::DoNotOptimize(f.call(Verb::Prioritize, p.prioritizes[k]));
    k = (k + 1) % p.filters.size();
  }
}
BENCHMARK(BM_NodeNamesPrioritize)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

constexpr size_t kFullNodes = 500;
constexpr size_t kFullPods = 16;

// Full-Nodes filter bodies (built on first use: ~100 MB).
const std::vector<Body>& fullBodies() {
  static const std::vector<Body>* bodies = [] {
    const fleet::FleetOptions fo = fleetOptions();
    const fleet::FleetGenerator gen(fo);
    std::vector<std::string> wires;
    for (size_t i = 0; i < std::min(kFullNodes, gen.size()); ++i) wires.push_back(gen.nodeWire(i));
    const std::string tail = fleet::fullArgsTail(wires);
    fleet::PodOptions po;
    po.pods = kFullPods;
    po.seed = fo.seed;
    const fleet::PodGenerator pods(po);
    auto* b = new std::vector<Body>(pods.size());
    for (size_t i = 0; i < pods.size(); ++i) (*b)[i].set(std::string(fleet::kFullArgsHead) + pods.podWire(i) + tail);
    return b;
  }();
  return *bodies;
}

void BM_FullNodes(benchmark::State& state) {
  Fixture& f = fixture();
  const std::vector<Body>& bodies = fullBodies();
  const Verb verb = state.range(0) == 0 ? Verb::Filter : Verb::Prioritize;
  size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.call(verb, bodies[k]));
    k = (k + 1) % bodies.size();
  }
  state.SetLabel(verb == Verb::Filter ? "filter" : "prioritize");
}
BENCHMARK(BM_FullNodes)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fleetsched::engine

BENCHMARK_MAIN();
