// ingest_bench: the watch-cache targets measured through the real ingestion path
// (engine::Ingestor → apiclient::CurlTransport over loopback HTTP → Reflector → codec → cache)
// against FakeApiServer, with fixtures from tools/fleet. See README.md beside it.
//
//   ingest_bench [--nodes 5000] [--pods 100000] [--reps 5] [--rate 200] [--seconds 4] [--pin]
//                [--ingest-priority idle|low|normal] [--feeder-priority idle|normal]
//                [--loaded INGEST/APISERVER[/SLICE_US[/SNDBUF_KB]],...] [--filter-stream status|churn]
//                [--hog N] [--lock-probe-ms N] [--only sync,memory,steady,filter]
//
// Phases:
//   sync    initial sync time, paged lists (streaming list answered 422) and streaming list;
//   memory  live heap (glibc mallinfo2) after syncing 0 / half / all nodes, then half / all pods;
//   steady  pod watch events applied per second, two event mixes (status updates; delete+add);
//   filter  filter p50/p99 for 5,000 NodeNames through engine::Server + ExtenderService on this
//           thread, idle vs while the ingestion thread applies events flat out, interleaved.
#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache.h"
#include "cache/file_source.h"
#include "codec/decoder.h"
#include "engine/ingest/ingest.h"
#include "engine/reactor/metrics.h"
#include "engine/reactor/server.h"
#include "engine/service/extender_service.h"
#include "plugins/config.h"
#include "tools/apiserver/fake_apiserver.h"
#include "tools/fleet/fleet_gen.h"

namespace fleetsched::bench::ingest {
namespace {

using namespace std::chrono_literals;
namespace fleet = tools::fleet;
using tools::apiserver::Collection;
using tools::apiserver::FakeApiServer;
using tools::apiserver::SteadyClock;
using tools::apiserver::WatchMode;

struct LoadedPolicy {
  engine::IngestPriority ingest, feeder;
  uint32_t sliceUs = 0;  // the reactor's EEVDF slice during this half and its idle twin; 0: default
  int sndbufKb = 0;      // the fake apiserver's SO_SNDBUF during this half; 0: autotuned
};

struct Options {
  size_t nodes = 5000;
  size_t pods = 100000;
  size_t reps = 5;
  double rate = 200;    // filter requests per second
  double seconds = 4;   // per filter phase
  bool pin = false;     // reactor on CPU 0, everything else on CPU 1
  std::string only = "sync,memory,steady,filter";
  engine::IngestPriority ingestPriority = engine::IngestOptions{}.priority;
  // The fake apiserver stands for another machine: at idle it takes only CPU time that neither
  // the reactor nor the filter client (kube-scheduler, also elsewhere) wants.
  engine::IngestPriority feederPriority = engine::IngestPriority::Idle;
  bool filterChurn = false;  // filter phase loaded with delete + add pairs instead of status updates
  // Loaded halves of the filter phase, each with its own policies, interleaved with the idle
  // half in every repetition; empty: one, with the two priorities above.
  std::vector<LoadedPolicy> loaded;
  // Busy threads in a child process of its own session (its own autogroup, like another pod on
  // the node) for the whole filter phase: what a starved idle-priority thread costs.
  size_t hog = 0;
  // Take the cache writer lock on the reactor every N ms (as a bind's reservation and serve's
  // reservation expiry do) and report the waits; 0: off, as the probe's own stalls add to
  // filter latency.
  uint32_t lockProbeMs = 0;
};

double secondsSince(SteadyClock::time_point t0, SteadyClock::time_point t1) {
  return std::chrono::duration<double>(t1 - t0).count();
}

template <class T>
T median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

size_t heapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

// `{"apiVersion":"v1","kind":"Pod",...}` from a list item, as watch events carry TypeMeta.
std::string withTypeMeta(std::string_view item, std::string_view kind) {
  std::string out = R"({"apiVersion":"v1","kind":")";
  out += kind;
  out += "\",";
  out.append(item.substr(1));
  return out;
}

struct Fixture {
  Collection nodes{"NodeList"};
  Collection pods{"PodList"};
  std::vector<std::string> nodeNames;
  std::vector<bool> podBound;
  std::vector<std::string> pendingPods;  // filter request pods (not in the cluster)
  size_t statusStream = 0, churnStream = 0;

  size_t boundAmong(size_t served) const {
    return static_cast<size_t>(std::count(podBound.begin(), podBound.begin() + static_cast<long>(served), true));
  }
};

void buildFixture(const Options& o, Fixture& f) {
  auto t0 = SteadyClock::now();
  fleet::FleetOptions fo;
  fo.nodes = o.nodes;
  fo.seed = 7;
  fleet::FleetGenerator fleet(fo);
  for (size_t i = 0; i < fleet.size(); ++i) {
    f.nodes.add(fleet.nodeWire(i));
    f.nodeNames.push_back(fleet.summary(i).name);
  }
  // A running cluster: mostly CPU pods, with GPU pods the fleet's GPUs can hold.
  fleet::PodOptions po;
  po.pods = o.pods;
  po.seed = 7;
  po.weightCpuOnly = 88;
  po.weightGpu1 = 6;
  po.weightGpu2 = 1;
  po.weightGpu4 = 0.3;
  po.weightGpu8 = 0.1;
  po.weightGpuShare = 4;
  po.namePrefix = "run-";
  fleet::PodGenerator pods(po);
  pods.bindToFleet(fleet);
  std::string status, churn;
  size_t statusEvents = 0, churnEvents = 0;
  for (size_t i = 0; i < pods.size(); ++i) {
    std::string wire = pods.podWire(i);
    f.pods.add(wire);
    bool bound = !pods.summary(i).nodeName.empty();
    f.podBound.push_back(bound);
    std::string obj = withTypeMeta(wire, "Pod");
    // Status updates: accounting unchanged (the common MODIFIED).
    status += R"({"type":"MODIFIED","object":)" + obj + "}\n";
    ++statusEvents;
    // Churn: every other pod leaves and comes back, uncharged and charged again.
    if (i % 2 == 0) {
      churn += R"({"type":"DELETED","object":)" + obj + "}\n";
      churn += R"({"type":"ADDED","object":)" + obj + "}\n";
      churnEvents += 2;
    }
  }
  f.statusStream = f.pods.addWatchStream(std::move(status), statusEvents);
  f.churnStream = f.pods.addWatchStream(std::move(churn), churnEvents);

  fleet::PodOptions pp;
  pp.pods = 16;
  pp.seed = 11;
  pp.namePrefix = "pending-";
  fleet::PodGenerator pending(pp);
  for (size_t i = 0; i < pending.size(); ++i) f.pendingPods.push_back(pending.podWire(i));

  size_t bound = f.boundAmong(f.pods.size());
  std::printf("fixture: %zu nodes (%.1f MB of list items), %zu pods (%zu bound, %.1f MB), "
              "watch streams %zu + %zu events (%.1f + %.1f MB); built in %.1f s\n",
              f.nodes.size(), static_cast<double>(f.nodes.itemBytes()) / 1e6, f.pods.size(), bound,
              static_cast<double>(f.pods.itemBytes()) / 1e6, statusEvents, churnEvents,
              static_cast<double>(f.pods.watchStream(f.statusStream).size()) / 1e6,
              static_cast<double>(f.pods.watchStream(f.churnStream).size()) / 1e6,
              secondsSince(t0, SteadyClock::now()));
}

std::string writeKubeconfig(uint16_t port) {
  auto path = std::filesystem::temp_directory_path() / ("ingest_bench_" + std::to_string(getpid()) + ".kubeconfig");
  std::ofstream(path) << tools::apiserver::kubeconfig(port);
  return path.string();
}

std::vector<int> threadIds() {
  std::vector<int> ids;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ids.push_back(std::stoi(e.path().filename()));
  std::sort(ids.begin(), ids.end());
  return ids;
}

// User + system CPU seconds of one thread of this process (0 once it has exited). Wall time on
// this shared machine swings 2× with other people's load; the ingestion thread's CPU time does
// not, so before/after comparisons quote both.
double threadCpuSeconds(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields;
  size_t pos = close + 2;
  while (pos < stat.size() && fields.size() < 15) {
    size_t sp = stat.find(' ', pos);
    fields.push_back(stat.substr(pos, sp - pos));
    pos = sp == std::string::npos ? stat.size() : sp + 1;
  }
  if (fields.size() < 13) return 0;
  // Fields 14 and 15 of proc(5) (utime, stime), counted from the state field (3).
  return static_cast<double>(std::stoull(fields[11]) + std::stoull(fields[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A thread's CPU time and time spent runnable but waiting for a CPU (schedstat, seconds).
struct SchedStat {
  double cpu = 0, wait = 0;
};
SchedStat schedStat(int tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  unsigned long long run = 0, wait = 0;
  in >> run >> wait;
  return {static_cast<double>(run) / 1e9, static_cast<double>(wait) / 1e9};
}

// One ingestion pipeline: cache, metrics, ingestor, on a reactor loop that is run only to
// release the ingestor's handle.
struct Pipeline {
  cache::Cache cache{plugins::defaultConfig().interpretation()};  // as serve builds it without --config
  engine::Metrics metrics;
  std::unique_ptr<engine::Ingestor> ingestor;
  uv_loop_t* reactor;

  Pipeline(uv_loop_t* loop, const std::string& kubeconfig, bool streaming, engine::IngestPriority priority)
      : reactor(loop) {
    engine::IngestOptions io;
    io.kubeconfig = kubeconfig;
    io.streamingList = streaming;
    io.priority = priority;
    ingestor = std::make_unique<engine::Ingestor>(cache, metrics, io);
  }
  ~Pipeline() {
    ingestor->stop();
    uv_run(reactor, UV_RUN_NOWAIT);
  }

  bool start(std::string& error) {
    std::vector<int> before = threadIds();
    if (!ingestor->start(reactor, error)) return false;
    for (int id : threadIds()) {
      if (!std::binary_search(before.begin(), before.end(), id)) threads.push_back(id);
    }
    return true;
  }
  // CPU seconds of the threads the ingestor started (its loop thread).
  double cpuSeconds() const {
    double s = 0;
    for (int id : threads) s += threadCpuSeconds(id);
    return s;
  }
  std::vector<int> threads;
};

struct SyncResult {
  double seconds = 0;
  double cpu = 0;  // the ingestion thread's
  bool ok = false;
};

// Starts the pipeline and waits until both kinds have listed (each reflector's first plain
// watch request reaches the server, right after endRelist) and the cache holds what was served.
SyncResult syncPipeline(Pipeline& p, FakeApiServer& server, const Fixture& f) {
  server.clearArrivals();
  SyncResult r;
  std::string error;
  auto t0 = SteadyClock::now();
  if (!p.start(error)) {
    std::fprintf(stderr, "ingest_bench: %s\n", error.c_str());
    return r;
  }
  const uint64_t wantNodes = f.nodes.served();
  const uint64_t wantPods = f.boundAmong(f.pods.served());
  for (;;) {
    auto n = server.watchArrivals(false);
    auto pd = server.watchArrivals(true);
    cache::CacheStats st = p.cache.stats();
    if (!n.empty() && !pd.empty() && st.nodes == wantNodes && st.boundPods == wantPods) {
      r.seconds = secondsSince(t0, std::max(n.front(), pd.front()));
      r.cpu = p.cpuSeconds();
      r.ok = true;
      return r;
    }
    if (SteadyClock::now() - t0 > 120s) {
      std::fprintf(stderr, "ingest_bench: sync timed out: %llu/%llu nodes, %llu/%llu pods\n",
                   static_cast<unsigned long long>(st.nodes), static_cast<unsigned long long>(wantNodes),
                   static_cast<unsigned long long>(st.boundPods), static_cast<unsigned long long>(wantPods));
      return r;
    }
    std::this_thread::sleep_for(200us);
  }
}

void phaseSync(const Options& o, uv_loop_t* reactor, FakeApiServer& server, const std::string& kubeconfig,
               const Fixture& f) {
  for (bool streaming : {false, true}) {
    server.setStreamingList(streaming);
    std::vector<double> times, cpu;
    for (size_t i = 0; i < o.reps; ++i) {
      Pipeline p(reactor, kubeconfig, true, o.ingestPriority);
      SyncResult r = syncPipeline(p, server, f);
      if (!r.ok) return;
      times.push_back(r.seconds);
      cpu.push_back(r.cpu);
    }
    std::sort(times.begin(), times.end());
    std::printf("sync %s: %zu nodes + %zu pods: median %.3f s (min %.3f, max %.3f, %zu runs); ingestion thread CPU "
                "median %.3f s\n",
                streaming ? "streaming list (sendInitialEvents)" : "paged lists (limit 500; streaming answered 422)",
                f.nodes.served(), f.pods.served(), median(times), times.front(), times.back(), times.size(),
                median(cpu));
  }
  server.setStreamingList(false);
}

// The cache alone, fed the same objects by a codec::Decoder in pages of 500 (no reflector, no
// sink key table, no transport), for comparison with the pipeline's numbers.
size_t cacheOnlyBytes(const Fixture& f, size_t nodes, size_t pods) {
  malloc_trim(0);
  size_t before = heapInUse();
  auto cache = std::make_unique<cache::Cache>(plugins::defaultConfig().interpretation());
  {
    codec::Decoder decoder(cache::kMaxClusterFileBytes);
    codec::NodeList nl;
    codec::PodList pl;
    std::string body;
    auto page = [&](const Collection& c, size_t b, size_t e) {
      body = "{\"kind\":\"" + c.listKind() + "\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":[";
      body += c.slice(b, e);
      body += "]}";
      size_t n = body.size();
      body.append(codec::kDecodePadding, '\0');
      return std::string_view(body.data(), n);
    };
    for (size_t b = 0; b < nodes; b += 500) {
      if (!decoder.decodeNodeList(page(f.nodes, b, std::min(nodes, b + 500)), nl)) std::abort();
      auto w = cache->write();
      for (const codec::Node& n : nl.items) w.upsertNode(n);
    }
    for (size_t b = 0; b < pods; b += 500) {
      if (!decoder.decodePodList(page(f.pods, b, std::min(pods, b + 500)), pl)) std::abort();
      auto w = cache->write();
      for (const codec::Pod& p : pl.items) w.upsertPod(p);
    }
  }
  cache->write().publish();
  cache->write().publish();
  size_t after = heapInUse();
  return after - before;
}

void phaseMemory(const Options& o, uv_loop_t* reactor, FakeApiServer& server, const std::string& kubeconfig, Fixture& f) {
  struct Point {
    size_t nodes, pods;
  };
  const size_t N = f.nodes.size(), P = f.pods.size();
  const Point points[] = {{0, 0}, {N / 2, 0}, {N, 0}, {N, P / 2}, {N, P}};
  std::vector<size_t> bytes;
  for (const Point& pt : points) {
    f.nodes.setServed(pt.nodes);
    f.pods.setServed(pt.pods);
    malloc_trim(0);
    size_t before = heapInUse();
    Pipeline p(reactor, kubeconfig, false, o.ingestPriority);
    if (!syncPipeline(p, server, f).ok) return;
    p.cache.write().publish();  // reclaims what the last batch retired
    std::this_thread::sleep_for(50ms);
    p.cache.write().publish();
    size_t after = heapInUse();
    bytes.push_back(after - before);
    std::printf("memory: %5zu nodes %6zu pods (%6zu bound): +%.2f MB live heap (retired pending %llu)\n", pt.nodes,
                pt.pods, f.boundAmong(pt.pods), static_cast<double>(after - before) / 1e6,
                static_cast<unsigned long long>(p.cache.stats().retiredPending));
  }
  f.nodes.setServed(N);
  f.pods.setServed(P);
  auto per = [](size_t a, size_t b, size_t n) { return n == 0 ? 0.0 : (static_cast<double>(b) - static_cast<double>(a)) / static_cast<double>(n); };
  const size_t boundHalf = f.boundAmong(P / 2), boundAll = f.boundAmong(P);
  std::printf("memory per node: %.0f B (0 → %zu nodes), %.0f B (%zu → %zu, slope)\n", per(bytes[0], bytes[2], N), N,
              per(bytes[1], bytes[2], N - N / 2), N / 2, N);
  std::printf("memory per pod:  %.0f B (0 → %zu bound pods), %.0f B (%zu → %zu bound, slope)\n",
              per(bytes[2], bytes[4], boundAll), boundAll, per(bytes[3], bytes[4], boundAll - boundHalf), boundHalf,
              boundAll);
  size_t c0 = cacheOnlyBytes(f, N / 2, 0), c1 = cacheOnlyBytes(f, N, 0);
  size_t c2 = cacheOnlyBytes(f, N, P / 2), c3 = cacheOnlyBytes(f, N, P);
  std::printf("cache alone (same objects, decoded directly): %.0f B per node (slope %zu → %zu), %.0f B per bound pod "
              "(slope %zu → %zu); %.1f MB for all\n",
              per(c0, c1, N - N / 2), N / 2, N, per(c2, c3, boundAll - boundHalf), boundHalf, boundAll,
              static_cast<double>(c3) / 1e6);
}

// Events/s of the pods' watch streams: each stream is answered whole, then the reflector
// re-watches, so the gap between two watch requests is one stream received and applied.
std::vector<double> streamRates(FakeApiServer& server, size_t events, size_t streams, size_t stream) {
  server.clearArrivals();
  server.setPodWatchMode(WatchMode::Stream, stream);
  std::vector<SteadyClock::time_point> a;
  auto t0 = SteadyClock::now();
  while ((a = server.watchArrivals(true)).size() < streams + 1 && SteadyClock::now() - t0 < 300s) {
    std::this_thread::sleep_for(1ms);
  }
  server.setPodWatchMode(WatchMode::Hold);
  std::vector<double> rates;
  for (size_t i = 1; i < a.size(); ++i) rates.push_back(static_cast<double>(events) / secondsSince(a[i - 1], a[i]));
  // Let the stream in flight end, so the next phase starts idle.
  size_t seen = server.watchArrivals(true).size();
  while (server.watchArrivals(true).size() == seen && SteadyClock::now() - t0 < 300s) std::this_thread::sleep_for(1ms);
  return rates;
}

void phaseSteady(const Options& o, uv_loop_t* reactor, FakeApiServer& server, const std::string& kubeconfig,
                 const Fixture& f) {
  Pipeline p(reactor, kubeconfig, false, o.ingestPriority);
  if (!syncPipeline(p, server, f).ok) return;
  struct Mix {
    const char* name;
    size_t stream;
  };
  for (Mix m : {Mix{"status updates (MODIFIED, accounting unchanged)", f.statusStream},
                Mix{"churn (DELETED + ADDED, uncharge + charge)", f.churnStream}}) {
    size_t events = f.pods.watchEvents(m.stream);
    double cpu0 = p.cpuSeconds();
    std::vector<double> rates = streamRates(server, events, o.reps, m.stream);
    // The streams measured plus the one in flight at the switch back, all applied by now.
    double cpuPerEvent = (p.cpuSeconds() - cpu0) / static_cast<double>(events * (rates.size() + 1));
    std::sort(rates.begin(), rates.end());
    std::printf("steady %s: %zu events per stream, median %.0f events/s (min %.0f, max %.0f, %zu streams); "
                "ingestion thread %.2f µs CPU per event (%.0f events per CPU-second); cache %llu nodes %llu pods\n",
                m.name, events, median(rates), rates.empty() ? 0 : rates.front(), rates.empty() ? 0 : rates.back(),
                rates.size(), cpuPerEvent * 1e6, 1.0 / cpuPerEvent, static_cast<unsigned long long>(p.cache.stats().nodes),
                static_cast<unsigned long long>(p.cache.stats().boundPods));
  }
}

// A blocking HTTP/1.1 keep-alive client sending filter requests at a fixed rate.
class FilterClient {
 public:
  bool connect(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~FilterClient() {
    if (fd_ >= 0) close(fd_);
  }

  // Returns seconds, or a negative value on failure.
  double roundTrip(const std::string& request) {
    auto t0 = SteadyClock::now();
    size_t off = 0;
    while (off < request.size()) {
      ssize_t n = send(fd_, request.data() + off, request.size() - off, 0);
      if (n <= 0) return -1;
      off += static_cast<size_t>(n);
    }
    in_.clear();
    size_t headerEnd = std::string::npos, length = 0;
    char buf[65536];
    for (;;) {
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return -1;
      in_.append(buf, static_cast<size_t>(n));
      if (headerEnd == std::string::npos) {
        headerEnd = in_.find("\r\n\r\n");
        if (headerEnd == std::string::npos) continue;
        if (in_.compare(0, 12, "HTTP/1.1 200") != 0) return -1;
        size_t cl = in_.find("Content-Length: ");
        if (cl == std::string::npos || cl > headerEnd) cl = in_.find("content-length: ");
        if (cl == std::string::npos || cl > headerEnd) return -1;
        length = std::strtoull(in_.c_str() + cl + 16, nullptr, 10);
      }
      if (in_.size() >= headerEnd + 4 + length) break;
    }
    return secondsSince(t0, SteadyClock::now());
  }

 private:
  int fd_ = -1;
  std::string in_;
};

struct LatencyRun {
  std::vector<double> lat;
  size_t late = 0;  // sends that started behind schedule
};

LatencyRun runFilters(FilterClient& client, const std::vector<std::string>& requests, double rate, double seconds) {
  LatencyRun run;
  auto start = SteadyClock::now();
  auto period = std::chrono::duration<double>(1.0 / rate);
  for (size_t k = 0;; ++k) {
    auto due = start + std::chrono::duration_cast<SteadyClock::duration>(period * static_cast<double>(k));
    if (due - start > std::chrono::duration<double>(seconds)) break;
    auto now = SteadyClock::now();
    if (now < due) {
      std::this_thread::sleep_until(due);
    } else if (now - due > period) {
      ++run.late;
    }
    double s = client.roundTrip(requests[k % requests.size()]);
    if (s < 0) {
      std::fprintf(stderr, "ingest_bench: filter request failed\n");
      return run;
    }
    run.lat.push_back(s);
  }
  return run;
}

// Sets another thread's policy (Linux keeps policy and nice per thread). Raising a thread back
// from idle or nice 19 needs CAP_SYS_NICE; the bench says so and goes on.
void setThreadPriority(int tid, engine::IngestPriority p) {
  sched_param param{};
  int policy = p == engine::IngestPriority::Idle ? SCHED_IDLE : p == engine::IngestPriority::Low ? SCHED_BATCH : SCHED_OTHER;
  int nice = p == engine::IngestPriority::Low ? 19 : 0;
  if (sched_setscheduler(tid, policy, &param) != 0 || setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) != 0) {
    std::fprintf(stderr, "ingest_bench: cannot set thread %d to %s: %s\n", tid, engine::ingestPriorityName(p),
                 std::strerror(errno));
  }
}

// Starts `n` spinning processes in a new session (one process group); returns its leader's pid.
// Processes, not threads: the child of a multithreaded parent should not start threads.
[[noreturn]] void spin() {
  std::atomic<uint64_t> x{0};
  for (;;) x.fetch_add(1, std::memory_order_relaxed);
}
pid_t startHog(size_t n) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setsid();
  for (size_t i = 1; i < n; ++i) {
    if (fork() == 0) spin();
  }
  spin();
}

// Asks EEVDF (Linux ≥ 6.12) for a custom slice on thread `tid` (0: default): a thread whose
// slice is shorter than the running one's may preempt it on wakeup. No privilege needed.
bool setSlice(int tid, uint32_t us) {
  struct Attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
  } attr{};
  attr.size = sizeof attr;
  attr.policy = SCHED_OTHER;
  errno = 0;
  attr.nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  attr.runtime = static_cast<uint64_t>(us) * 1000;
  if (syscall(SYS_sched_setattr, tid, &attr, 0) != 0) {
    std::fprintf(stderr, "ingest_bench: sched_setattr slice %u µs: %s\n", us, std::strerror(errno));
    return false;
  }
  return true;
}

void phaseFilter(const Options& o, uv_loop_t* reactor, FakeApiServer& server, const std::vector<int>& feederThreads,
                 const std::string& kubeconfig, const Fixture& f) {
  Pipeline p(reactor, kubeconfig, false, o.ingestPriority);
  if (!syncPipeline(p, server, f).ok) return;
  plugins::Config config = plugins::defaultConfig();
  engine::Metrics metrics;
  engine::ExtenderService service(p.cache, config, metrics);
  engine::ServerConfig sc;
  sc.port = 0;
  engine::Server http(reactor, sc, service, metrics);
  if (http.listen() != 0) {
    std::fprintf(stderr, "ingest_bench: listen failed\n");
    return;
  }
  std::vector<std::string> requests;
  for (const std::string& pod : f.pendingPods) {
    std::string body;
    fleet::appendNodeNamesArgs(body, pod, f.nodeNames);
    requests.push_back("POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body);
  }
  uv_async_t done;
  // The ingestor's own handle on this loop keeps it alive: stop it explicitly.
  uv_async_init(reactor, &done, [](uv_async_t* h) {
    static_cast<engine::Server*>(h->data)->close();
    uv_stop(h->loop);
  });
  done.data = &http;
  const uint16_t port = http.port();

  struct Phase {
    std::string name;
    std::vector<double> lockWait;  // the reactor's waits for the cache writer lock (probe)
    std::vector<double> p50, p99, rates;
    std::vector<double> all;  // every latency of this side, for pooled percentiles
    size_t late = 0, n = 0;
    SchedStat reactor;        // the reactor thread's CPU and run-queue wait during this side
    double ingestCpu = 0;     // the ingestion thread's CPU seconds during this side
    uint64_t events = 0;      // watch events it applied meanwhile
    double wall = 0;
    void add(const LatencyRun& r, const SchedStat& s0, const SchedStat& s1) {
      p50.push_back(percentile(r.lat, 0.50));
      p99.push_back(percentile(r.lat, 0.99));
      all.insert(all.end(), r.lat.begin(), r.lat.end());
      late += r.late;
      n += r.lat.size();
      reactor.cpu += s1.cpu - s0.cpu;
      reactor.wait += s1.wait - s0.wait;
    }
  };
  auto sliceName = [](uint32_t us) {
    char buf[48] = "";
    if (us != 0) std::snprintf(buf, sizeof buf, ", reactor slice %u µs", us);
    return std::string(buf);
  };
  auto sliceTag = [](uint32_t us) {
    char buf[16] = "";
    if (us != 0) std::snprintf(buf, sizeof buf, "/%u", us);
    return std::string(buf);
  };
  // One idle half per reactor slice in use, so each loaded half has an idle twin.
  std::vector<uint32_t> slices;
  for (const LoadedPolicy& lp : o.loaded) {
    if (std::find(slices.begin(), slices.end(), lp.sliceUs) == slices.end()) slices.push_back(lp.sliceUs);
  }
  std::vector<Phase> idles;
  for (uint32_t us : slices) idles.push_back(Phase{"idle" + sliceName(us)});
  auto idleFor = [&](uint32_t us) -> Phase& {
    return idles[static_cast<size_t>(std::find(slices.begin(), slices.end(), us) - slices.begin())];
  };
  std::vector<Phase> loaded;
  for (const LoadedPolicy& lp : o.loaded) {
    char sndbuf[48] = "";
    if (lp.sndbufKb != 0) std::snprintf(sndbuf, sizeof sndbuf, ", apiserver SO_SNDBUF %d KB", lp.sndbufKb);
    loaded.push_back(Phase{std::string("loaded, ingestion ") + engine::ingestPriorityName(lp.ingest) + ", apiserver " +
                           engine::ingestPriorityName(lp.feeder) + sliceName(lp.sliceUs) + sndbuf});
  }
  // With --lock-probe-ms the reactor takes the cache writer lock periodically, as a bind's
  // reservation does, and records how long it waited: a lock the ingestion thread holds while
  // starved stalls the reactor.
  std::atomic<Phase*> probing{nullptr};
  struct Probe {
    uv_timer_t timer;
    std::atomic<Phase*>* phase;
    cache::Cache* cache;
  } probe{{}, &probing, &p.cache};
  uv_timer_init(reactor, &probe.timer);
  probe.timer.data = &probe;
  if (o.lockProbeMs > 0) uv_timer_start(
      &probe.timer,
      [](uv_timer_t* t) {
        auto* pr = static_cast<Probe*>(t->data);
        Phase* ph = pr->phase->load(std::memory_order_acquire);
        if (ph == nullptr) return;
        auto t0 = SteadyClock::now();
        { auto w = pr->cache->write(); }
        ph->lockWait.push_back(secondsSince(t0, SteadyClock::now()));
      },
      o.lockProbeMs, o.lockProbeMs);
  pid_t hog = o.hog > 0 ? startHog(o.hog) : 0;
  const int reactorTid = static_cast<int>(gettid());
  std::thread client([&] {
    FilterClient c;
    if (!c.connect(port)) {
      std::fprintf(stderr, "ingest_bench: cannot connect to the reactor\n");
      uv_async_send(&done);
      return;
    }
    runFilters(c, requests, o.rate, 1.0);  // warm-up
    const size_t stream = o.filterChurn ? f.churnStream : f.statusStream;
    size_t events = f.pods.watchEvents(stream);
    for (size_t rep = 0; rep < o.reps; ++rep) {
      std::printf("  rep %zu:", rep);
      SchedStat s0;
      for (size_t k = 0; k < slices.size(); ++k) {
        setSlice(reactorTid, slices[k]);
        s0 = schedStat(reactorTid);
        probing.store(&idles[k], std::memory_order_release);
        LatencyRun a = runFilters(c, requests, o.rate, o.seconds);
        probing.store(nullptr, std::memory_order_release);
        idles[k].add(a, s0, schedStat(reactorTid));
        std::printf(" idle%s p50 %.0f µs p99 %.0f µs |", sliceTag(slices[k]).c_str(),
                    idles[k].p50.back() * 1e6, idles[k].p99.back() * 1e6);
      }

      for (size_t k = 0; k < loaded.size(); ++k) {
        Phase& ph = loaded[k];
        // Policies switch between halves from outside the threads (the kernel keeps them per
        // thread), so every condition sees the same fixture, cache and machine noise.
        for (int tid : p.threads) setThreadPriority(tid, o.loaded[k].ingest);
        for (int tid : feederThreads) setThreadPriority(tid, o.loaded[k].feeder);
        setSlice(reactorTid, o.loaded[k].sliceUs);
        server.setSendBuffer(o.loaded[k].sndbufKb * 1024);
        server.clearArrivals();
        server.setPodWatchMode(WatchMode::Stream, stream);
        while (server.watchArrivals(true).empty()) std::this_thread::sleep_for(1ms);
        double cpu0 = p.cpuSeconds();
        uint64_t events0 = p.ingestor->eventsApplied();
        auto t0 = SteadyClock::now();
        s0 = schedStat(reactorTid);
        probing.store(&ph, std::memory_order_release);
        LatencyRun b = runFilters(c, requests, o.rate, o.seconds);
        probing.store(nullptr, std::memory_order_release);
        SchedStat s1 = schedStat(reactorTid);
        ph.ingestCpu += p.cpuSeconds() - cpu0;
        ph.events += p.ingestor->eventsApplied() - events0;
        ph.wall += secondsSince(t0, SteadyClock::now());
        auto arr = server.watchArrivals(true);
        server.setPodWatchMode(WatchMode::Hold);
        ph.add(b, s0, s1);
        for (size_t i = 1; i < arr.size(); ++i) ph.rates.push_back(static_cast<double>(events) / secondsSince(arr[i - 1], arr[i]));
        std::printf(" %s/%s%s%s p50 %.0f µs p99 %.0f µs (%zu streams) |", engine::ingestPriorityName(o.loaded[k].ingest),
                    engine::ingestPriorityName(o.loaded[k].feeder), sliceTag(o.loaded[k].sliceUs).c_str(),
                    sliceTag(static_cast<uint32_t>(o.loaded[k].sndbufKb)).c_str(),
                    ph.p50.back() * 1e6, ph.p99.back() * 1e6, arr.size() - 1);
        std::fflush(stdout);
        // Wait for the stream in flight to end so the next half starts idle.
        size_t seen = server.watchArrivals(true).size();
        while (server.watchArrivals(true).size() == seen) std::this_thread::sleep_for(1ms);
      }
      std::printf("\n");
    }
    uv_async_send(&done);
  });
  if (o.pin) pinTo(0);
  uv_run(reactor, UV_RUN_DEFAULT);
  if (slices.size() > 1 || slices.front() != 0) setSlice(reactorTid, 0);
  if (hog > 0) {
    kill(-hog, SIGKILL);  // the whole session's group: the leader and its spinners
    kill(hog, SIGKILL);   // in case it had not reached setsid()
    waitpid(hog, nullptr, 0);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&probe.timer), nullptr);
  client.join();
  uv_close(reinterpret_cast<uv_handle_t*>(&done), nullptr);
  uv_run(reactor, UV_RUN_NOWAIT);
  if (o.pin) pinTo(1);
  std::printf("filter %zu NodeNames at %.0f/s, %zu × %.0f s per half%s; loaded with %s; %zu busy threads in "
              "another session:\n",
              f.nodeNames.size(), o.rate, o.reps, o.seconds, o.pin ? " (reactor pinned to CPU 0, the rest to CPU 1)" : "",
              o.filterChurn ? "delete + add pairs" : "status updates", o.hog);
  auto line = [&](const Phase& ph) {
    double n = static_cast<double>(std::max<size_t>(ph.n, 1));
    std::printf("  %s: p50 %.0f µs, p99 %.0f µs (medians over reps; %zu requests, %zu sent late)\n", ph.name.c_str(),
                median(ph.p50) * 1e6, median(ph.p99) * 1e6, ph.n, ph.late);
    std::printf("    pooled p50 %.0f p90 %.0f p99 %.0f p99.9 %.0f max %.0f µs; reactor per request %.0f µs CPU, "
                "%.1f µs waiting for a CPU\n",
                percentile(ph.all, 0.50) * 1e6, percentile(ph.all, 0.90) * 1e6, percentile(ph.all, 0.99) * 1e6,
                percentile(ph.all, 0.999) * 1e6, percentile(ph.all, 1.0) * 1e6, ph.reactor.cpu / n * 1e6,
                ph.reactor.wait / n * 1e6);
    if (!ph.lockWait.empty()) {
      std::printf("    writer lock taken on the reactor every %u ms: wait p50 %.1f p99 %.0f p99.9 %.0f max %.0f µs (%zu "
                  "probes)\n",
                  o.lockProbeMs, percentile(ph.lockWait, 0.50) * 1e6, percentile(ph.lockWait, 0.99) * 1e6,
                  percentile(ph.lockWait, 0.999) * 1e6, percentile(ph.lockWait, 1.0) * 1e6, ph.lockWait.size());
    }
  };
  for (const Phase& ph : idles) line(ph);
  for (size_t k = 0; k < loaded.size(); ++k) {
    const Phase& ph = loaded[k];
    const Phase& idle = idleFor(o.loaded[k].sliceUs);
    line(ph);
    std::printf("    ingestion %.0f events/s over the loaded halves (%.0f per whole stream, median of %zu), its thread "
                "%.0f %% of a CPU; p99 / idle: %.2f (medians of per-rep p99), %.2f (pooled)\n",
                static_cast<double>(ph.events) / std::max(ph.wall, 1e-9), median(ph.rates), ph.rates.size(),
                ph.ingestCpu / std::max(ph.wall, 1e-9) * 100,
                median(ph.p99) / median(idle.p99), percentile(ph.all, 0.99) / percentile(idle.all, 0.99));
  }
}

bool has(const std::string& list, const char* phase) { return ("," + list + ",").find("," + std::string(phase) + ",") != std::string::npos; }

int run(const Options& o) {
  if (o.pin) pinTo(1);  // threads created from here on inherit CPU 1
  Fixture f;
  buildFixture(o, f);
  FakeApiServer server(f.nodes, f.pods);
  std::vector<int> before = threadIds();
  uint16_t port = server.start([p = o.feederPriority] {
    std::string err;
    if (!engine::applyThreadPolicy(p, {}, err)) std::fprintf(stderr, "ingest_bench: fake apiserver: %s\n", err.c_str());
  });
  if (port == 0) {
    std::fprintf(stderr, "ingest_bench: cannot start the fake API server\n");
    return 1;
  }
  std::vector<int> feederThreads;
  for (int id : threadIds()) {
    if (!std::binary_search(before.begin(), before.end(), id)) feederThreads.push_back(id);
  }
  std::string kubeconfig = writeKubeconfig(port);
  uv_loop_t reactor;
  uv_loop_init(&reactor);
  if (has(o.only, "sync")) phaseSync(o, &reactor, server, kubeconfig, f);
  if (has(o.only, "memory")) phaseMemory(o, &reactor, server, kubeconfig, f);
  if (has(o.only, "steady")) phaseSteady(o, &reactor, server, kubeconfig, f);
  if (has(o.only, "filter")) phaseFilter(o, &reactor, server, feederThreads, kubeconfig, f);
  server.stop();
  uv_run(&reactor, UV_RUN_NOWAIT);
  uv_loop_close(&reactor);
  std::filesystem::remove(kubeconfig);
  return 0;
}

}  // namespace
}  // namespace fleetsched::bench::ingest

int main(int argc, char** argv) {
  fleetsched::bench::ingest::Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ingest_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--nodes") o.nodes = std::stoul(next());
    else if (a == "--pods") o.pods = std::stoul(next());
    else if (a == "--reps") o.reps = std::stoul(next());
    else if (a == "--rate") o.rate = std::stod(next());
    else if (a == "--seconds") o.seconds = std::stod(next());
    else if (a == "--pin") o.pin = true;
    else if (a == "--hog") o.hog = std::stoul(next());
    else if (a == "--lock-probe-ms") o.lockProbeMs = static_cast<uint32_t>(std::stoul(next()));
    else if (a == "--only") o.only = next();
    else if (a == "--ingest-priority" || a == "--feeder-priority") {
      std::string v = next();
      if (!fleetsched::engine::parseIngestPriority(v, a == "--ingest-priority" ? o.ingestPriority : o.feederPriority)) {
        std::fprintf(stderr, "ingest_bench: %s: want idle, low or normal\n", a.c_str());
        return 2;
      }
    } else if (a == "--loaded") {
      // "normal/normal,idle/idle/100": ingestion/apiserver priority[/reactor slice µs] per loaded half.
      std::string v = next() + ",";
      for (size_t b = 0, e; (e = v.find(',', b)) != std::string::npos; b = e + 1) {
        std::string item = v.substr(b, e - b);
        size_t s1 = item.find('/');
        size_t s2 = s1 == std::string::npos ? s1 : item.find('/', s1 + 1);
        size_t s3 = s2 == std::string::npos ? s2 : item.find('/', s2 + 1);
        fleetsched::bench::ingest::LoadedPolicy lp{};
        if (s1 == std::string::npos || !fleetsched::engine::parseIngestPriority(item.substr(0, s1), lp.ingest) ||
            !fleetsched::engine::parseIngestPriority(item.substr(s1 + 1, s2 - s1 - 1), lp.feeder)) {
          std::fprintf(stderr, "ingest_bench: --loaded: want INGEST/APISERVER[/SLICE_US[/SNDBUF_KB]][,...], priorities idle, low "
                               "or normal\n");
          return 2;
        }
        if (s2 != std::string::npos) lp.sliceUs = static_cast<uint32_t>(std::stoul(item.substr(s2 + 1, s3 - s2 - 1)));
        if (s3 != std::string::npos) lp.sndbufKb = std::stoi(item.substr(s3 + 1));
        o.loaded.push_back(lp);
      }
    } else if (a == "--filter-stream") {
      std::string v = next();
      if (v != "status" && v != "churn") {
        std::fprintf(stderr, "ingest_bench: --filter-stream: want status or churn\n");
        return 2;
      }
      o.filterChurn = v == "churn";
    } else {
      std::fprintf(stderr,
                   "usage: ingest_bench [--nodes N] [--pods N] [--reps N] [--rate R] [--seconds S] [--pin] "
                   "[--ingest-priority idle|low|normal] [--feeder-priority idle|low|normal] "
                   "[--loaded INGEST/APISERVER[/SLICE_US[/SNDBUF_KB]],...] [--filter-stream status|churn] [--hog N] [--lock-probe-ms N] [--only sync,memory,steady,filter]\n");
      return 2;
    }
  }
  if (o.loaded.empty()) o.loaded.push_back({o.ingestPriority, o.feederPriority});
  return fleetsched::bench::ingest::run(o);
}
