#include "cmd/fleetsched/serve.h"

#include <uv.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <unordered_map>

#include "cache/cache.h"
#include "cache/demo_fleet.h"
#include "cache/file_source.h"
#include "cmd/fleetsched/cli.h"
#include "codec/decoder.h"
#include "engine/ingest/audit.h"
#include "engine/ingest/ingest.h"
#include "engine/reactor/metrics.h"
#include "engine/reactor/process_metrics.h"
#include "engine/reactor/server.h"
#include "engine/reactor/tls_reload.h"
#include "engine/service/extender_service.h"
#include "log/log.h"
#include "plugins/config.h"

#ifdef FLEETSCHED_MIMALLOC
#include <mimalloc.h>
#endif

namespace fleetsched::cmd {
namespace {

constexpr uint64_t kStatsIntervalMs = 1000;
// One body limit: the reactor's default is the decoder's (serve passes --max-body-bytes to both).
static_assert(engine::kDefaultMaxBodyBytes == codec::kDefaultMaxDocumentBytes);
// While draining after SIGTERM: how often to look whether the listeners are done.
constexpr uint64_t kDrainPollMs = 10;
// How often the TLS files are compared with the certificate in use: kubelet refreshes a mounted
// Secret within about a minute too, and cert-manager renews a third of a lifetime early.
constexpr uint64_t kTlsReloadCheckMs = 60'000;

bool splitListen(const std::string& listen, std::string& host, uint16_t& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  try {
    unsigned long p = std::stoul(listen.substr(colon + 1));
    if (p > 65535) return false;
    port = static_cast<uint16_t>(p);
  } catch (...) {
    return false;
  }
  return !host.empty();
}

// Everything `serve` runs, owned in one place so signal and timer callbacks reach it.
struct ServeState {
  const ServeOptions* options = nullptr;
  cache::Cache* cache = nullptr;
  engine::Server* server = nullptr;
  engine::Server* probeServer = nullptr;
  engine::TlsReloader* tlsReloader = nullptr;
  engine::Ingestor* ingestor = nullptr;
  engine::Gauge* nodes = nullptr;
  engine::Gauge* boundPods = nullptr;
  engine::Gauge* waitingPods = nullptr;
  engine::Gauge* reservationsLive = nullptr;
  engine::Counter* reservationsExpired = nullptr;
  engine::Gauge* gpuOvercommits = nullptr;
  engine::Gauge* auditMismatches = nullptr;
  std::string lastAudit;
  uv_timer_t auditTimer{};
  uint64_t expiredSeen = 0;
  engine::Metrics* metrics = nullptr;
  cache::Reader* statsReader = nullptr;
  // Per-node GPU gauges, registered the first time a GPU node is seen.
  std::unordered_map<std::string, std::pair<engine::Gauge*, engine::Gauge*>> gpuGauges;
  uv_signal_t sigint{}, sigterm{}, sighup{};
  uv_timer_t stats{};
  // SIGTERM/SIGINT: draining until both listeners are drained or drainDeadline (uv_now, ms).
  bool stopping = false;
  bool releasing = false;  // the leader election Lease is being given up; stopAll follows
  bool stopped = false;
  uv_timer_t drainTimer{};
  uint64_t drainStart = 0;
  uint64_t drainDeadline = 0;
  uint64_t residentAfterCollect = 0;  // bytes, after the last returnFreedMemory collection
  size_t bufferedHigh = 0;            // the most buffered bytes seen by a tick since then
};


// mimalloc keeps what the reactor freed in its pages for reuse: after 80 clients that never read
// had left, nothing was buffered any more and RSS stayed at 322 MB (33 MB before they came);
// mi_collect(true) brought it to 38 MB. So once a second, while the listener holds little: when
// it held kCollectAfter or more since the last collection, or resident memory grew by that
// much, collect. It runs on the reactor: handing back those 393 MB took one 37 ms call, and
// the growth it waits for keeps it to after spikes.
constexpr uint64_t kCollectAfter = 64u << 20;
constexpr size_t kCollectQuiet = 16u << 20;
void returnFreedMemory(ServeState& s) {
#ifdef FLEETSCHED_MIMALLOC
  const size_t buffered = s.server->bufferedBytes();
  s.bufferedHigh = std::max(s.bufferedHigh, buffered);
  if (buffered > kCollectQuiet) return;
  if (s.bufferedHigh < kCollectAfter && engine::residentMemoryBytes() < s.residentAfterCollect + kCollectAfter) return;
  mi_collect(true);
  s.residentAfterCollect = engine::residentMemoryBytes();
  s.bufferedHigh = buffered;
#else
  (void)s;
#endif
}

void reloadFiles(ServeState& s) {
  std::string error;
  cache::FileLoadStats st;
  if (!cache::reloadClusterFiles(*s.cache, s.options->nodesFile, s.options->podsFile, s.options->allowEmptyFleet,
                                 error, &st)) {
    FLOG_WARNING("reload failed, keeping the previous state").err(error);
    return;
  }
  FLOG_INFO(log::format("reloaded %zu nodes, %zu pods", st.nodes, st.pods)).kv("nodes", st.nodes).kv("pods", st.pods);
}

void onStats(uv_timer_t* t) {
  auto& s = *static_cast<ServeState*>(t->data);
  // Expiry needs the cache writer lock, which the reactor never waits for: when ingestion holds
  // it, the next tick expires (a TTL is seconds; ticks are one).
  if (s.cache->stats().reservationsLive > 0) {
    if (std::optional<cache::Cache::Writer> w = s.cache->tryWrite()) w->expire(cache::Clock::now());
  }
  returnFreedMemory(s);
  cache::CacheStats st = s.cache->stats();
  s.nodes->set(static_cast<double>(st.nodes));
  s.boundPods->set(static_cast<double>(st.boundPods));
  s.waitingPods->set(static_cast<double>(st.waitingPods));
  s.reservationsLive->set(static_cast<double>(st.reservationsLive));
  s.gpuOvercommits->set(static_cast<double>(st.gpuOvercommits));
  if (st.reservationsExpired > s.expiredSeen) s.reservationsExpired->inc(st.reservationsExpired - s.expiredSeen);
  s.expiredSeen = st.reservationsExpired;
  cache::Snapshot snap = s.statsReader->acquire();
  snap.forEachNode([&s](const plugins::NodeInfo& n) {
    if (n.scalarCount == 0 || n.scalars[0].allocatable <= 0) return;
    auto it = s.gpuGauges.find(std::string(n.name));
    if (it == s.gpuGauges.end()) {
      engine::Labels node{{"node", std::string(n.name)}};
      it = s.gpuGauges
               .emplace(std::string(n.name),
                        std::pair{&s.metrics->gauge("gpu_allocated", "GPUs charged on the node", node),
                                  &s.metrics->gauge("gpu_free", "GPUs free on the node", node)})
               .first;
    }
    it->second.first->set(static_cast<double>(n.scalars[0].used));
    it->second.second->set(static_cast<double>(n.scalars[0].allocatable - n.scalars[0].used));
  });
}

void onAudit(uv_timer_t* t) {
  auto& s = *static_cast<ServeState*>(t->data);
  if (s.ingestor == nullptr || !s.ingestor->synced()) return;
  s.ingestor->audit([&s](engine::AuditResult r, std::string error) {
    if (!error.empty()) {
      FLOG_ERROR("audit failed").err(error);
      return;
    }
    s.auditMismatches->set(static_cast<double>(r.mismatchedNodes));
    if (r.mismatchedNodes > 0 || r.overcommittedNodes > 0) {
      FLOG_WARNING(log::format("audit: %zu of %zu nodes differ from the API server, %zu overcommitted",
                               r.mismatchedNodes, r.nodes, r.overcommittedNodes))
          .kvJson("audit", r.json.ends_with('\n') ? std::string_view(r.json).substr(0, r.json.size() - 1) : r.json);
    }
    s.lastAudit = std::move(r.json);
  });
}

void stopAll(ServeState& s) {
  if (s.stopped) return;
  s.stopped = true;
  uv_timer_stop(&s.drainTimer);
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&s.drainTimer))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&s.drainTimer), nullptr);
  }
  s.server->close();
  if (s.probeServer != nullptr) s.probeServer->close();
  if (s.tlsReloader != nullptr) s.tlsReloader->close();
  if (s.ingestor != nullptr) s.ingestor->stop();
  uv_timer_stop(&s.stats);
  uv_timer_stop(&s.auditTimer);
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&s.auditTimer))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&s.auditTimer), nullptr);
  }
  for (uv_signal_t* sig : {&s.sigint, &s.sigterm, &s.sighup}) {
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(sig))) uv_close(reinterpret_cast<uv_handle_t*>(sig), nullptr);
  }
  if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&s.stats))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&s.stats), nullptr);
  }
}

// The end of a drain: with --leader-elect the Lease is given up first (no holder, 1 s), so
// another replica binds within about a second instead of a lease duration, and only after this
// one's binds in flight are done. Then everything stops.
void finish(ServeState& s) {
  if (s.releasing || s.stopped) return;
  uv_timer_stop(&s.drainTimer);
  if (s.ingestor == nullptr || !s.options->leaderElect) return stopAll(s);
  s.releasing = true;
  s.ingestor->releaseLease([&s] { stopAll(s); });
}

void onDrainTick(uv_timer_t* t) {
  auto& s = *static_cast<ServeState*>(t->data);
  const uint64_t now = uv_now(t->loop);
  // The probe listener keeps answering (/readyz 503) until the verbs listener has drained.
  if (s.server->drained()) {
    FLOG_INFO(log::format("drained in %llu ms, exiting", static_cast<unsigned long long>(now - s.drainStart)));
    return finish(s);
  }
  if (now < s.drainDeadline) return;
  FLOG_WARNING(log::format("--shutdown-grace of %us is over: cutting %zu request(s) in flight",
                           s.options->shutdownGraceSec, s.server->pendingRequests()));
  finish(s);
}

// SIGTERM or SIGINT: stop accepting, let what is in flight finish (up to --shutdown-grace), exit.
// A second one exits at once.
void onStopSignal(ServeState& s, int signum) {
  const char* name = signum == SIGINT ? "SIGINT" : "SIGTERM";
  if (s.stopping) {
    FLOG_WARNING(log::format("%s again: cutting %zu request(s) in flight, exiting now", name,
                             s.server->pendingRequests()));
    return stopAll(s);
  }
  s.stopping = true;
  // No new bind or preempt from now on; the Lease is kept until the binds in flight are done.
  if (s.ingestor != nullptr) s.ingestor->stepDown();
  if (s.options->shutdownGraceSec == 0) {
    FLOG_WARNING(log::format("%s: cutting %zu request(s) in flight (--shutdown-grace=0), exiting", name,
                             s.server->pendingRequests()));
    return finish(s);
  }
  FLOG_INFO(log::format("%s: draining for up to %us: no new connections, /readyz 503, requests in flight "
                        "finish (again to exit now)",
                        name, s.options->shutdownGraceSec));
  s.server->shutdown();
  s.drainStart = uv_now(s.drainTimer.loop);
  s.drainDeadline = s.drainStart + uint64_t{s.options->shutdownGraceSec} * 1000;
  uv_timer_start(&s.drainTimer, onDrainTick, 0, kDrainPollMs);
}

}  // namespace

namespace {

// Setup steps of runServe, in order. Each returns 0, or the exit code after logging why.

// Logging from --logging-format and -v.
int setupLogging(const ServeOptions& o) {
  log::Format format = log::Format::kText;
  if (!log::parseFormat(o.loggingFormat, format)) {
    FLOG_ERROR(log::format("--logging-format %s: want text or json", o.loggingFormat.c_str()));
    return 1;
  }
  log::setFormat(format);
  log::setVerbosity(o.verbosity);
  return 0;
}

// The verbs listener and the probe listener (a copy of it without the verbs, taken before
// HTTPS is set up: probes stay plain HTTP), with the TLS files loaded when given.
int listenerConfigs(const ServeOptions& o, engine::ServerConfig& serverConfig, engine::ServerConfig& probeConfig,
                    std::optional<engine::TlsReloader>& tlsReloader) {
  if (!splitListen(o.listen, serverConfig.host, serverConfig.port)) {
    FLOG_ERROR(log::format("--listen %s: want HOST:PORT", o.listen.c_str()));
    return 1;
  }
  serverConfig.urlPrefix = o.urlPrefix;
  serverConfig.reusePort = o.reusePort;
  serverConfig.firstByteTimeoutMs = o.firstByteTimeoutSec * 1000;  // at most 3600 s (the flag's check)
  serverConfig.maxConnectionsPerClient = o.maxConnectionsPerClient;
  probeConfig = serverConfig;
  probeConfig.serveVerbs = false;
  probeConfig.urlPrefix.clear();
  probeConfig.metricLabels = {{"listener", "probes"}};
  if (!o.probeListen.empty() && !splitListen(o.probeListen, probeConfig.host, probeConfig.port)) {
    FLOG_ERROR(log::format("--probe-listen %s: want HOST:PORT", o.probeListen.c_str()));
    return 1;
  }
  if (o.maxBodyBytes != 0) serverConfig.maxBodyBytes = o.maxBodyBytes;
  if (o.maxConnections != 0) serverConfig.maxConnections = o.maxConnections;
  // HTTPS on the verbs listener only, its files re-read every kTlsReloadCheckMs.
  if (!o.tlsCertFile.empty() || !o.tlsPrivateKeyFile.empty() || !o.clientCaFile.empty()) {
    if (o.tlsCertFile.empty() || o.tlsPrivateKeyFile.empty()) {
      FLOG_ERROR(o.tlsCertFile.empty() && o.tlsPrivateKeyFile.empty()
                     ? "--client-ca-file needs --tls-cert-file and --tls-private-key-file"
                     : "--tls-cert-file and --tls-private-key-file go together: give both");
      return 1;
    }
    std::string tlsError;
    tlsReloader.emplace(engine::TlsFiles{o.tlsCertFile, o.tlsPrivateKeyFile, o.clientCaFile});
    serverConfig.tls = tlsReloader->load(tlsError);
    if (!serverConfig.tls) {
      FLOG_ERROR(log::format("TLS: %s", tlsError.c_str()));
      return 1;
    }
  }
  serverConfig.maxBufferedBytes = o.maxBufferedBytes;
  probeConfig.maxBufferedBytes = o.maxBufferedBytes;
  if (o.maxBufferedBytes != 0 && o.maxBufferedBytes < serverConfig.maxBodyBytes) {
    FLOG_ERROR(log::format("--max-buffered-bytes %llu is below the largest body allowed (%zu, --max-body-bytes): "
                           "such a body could never be accepted",
                           static_cast<unsigned long long>(o.maxBufferedBytes), serverConfig.maxBodyBytes));
    return 2;
  }
  return 0;
}

// Which node source serve uses (an API server, files, or the demo fleet), and the leader
// election's settings when --leader-elect asks for one.
int electionConfig(const ServeOptions& o, bool watch, bool files,
                   std::optional<engine::LeaderElectionConfig>& election) {
  if (watch && (files || o.demoFleet)) {
    FLOG_ERROR("choose one node source: an API server, files, or --demo-fleet");
    return 1;
  }
  if (o.bind && !watch) {
    FLOG_ERROR("--bind needs an API server (--kubeconfig or --in-cluster)");
    return 1;
  }
  if (o.leaderElect) {
    if (!o.bind) {
      FLOG_ERROR("--leader-elect needs --bind: the election decides which replica binds and preempts");
      return kExitUsage;
    }
    engine::LeaderElectionConfig c;
    c.leaseNamespace = o.leaderElectResourceNamespace;
    c.leaseName = o.leaderElectResourceName;
    c.identity = engine::leaderElectionIdentity();
    // The flags' validator accepted these.
    parseDurationMs(o.leaderElectLeaseDuration, c.leaseDurationMs);
    parseDurationMs(o.leaderElectRenewDeadline, c.renewDeadlineMs);
    parseDurationMs(o.leaderElectRetryPeriod, c.retryPeriodMs);
    std::string invalid;
    if (!engine::validateLeaderElection(c, invalid)) {
      FLOG_ERROR(invalid);
      return kExitUsage;
    }
    election = std::move(c);
  }
  return 0;
}

// The profiles (--config, or the default), and the cache filled from files or the demo fleet
// (an API server fills it later); `source` names what it holds.
int loadProfiles(const ServeOptions& o, std::optional<plugins::Config>& config) {
  if (o.configFile.empty()) {
    config.emplace(plugins::defaultConfig());
    return 0;
  }
  std::string error;
  config = plugins::loadConfigFile(o.configFile, error);
  if (!config) {
    FLOG_ERROR(error);
    return 1;
  }
  return 0;
}
int fillCache(const ServeOptions& o, bool watch, bool files, cache::Cache& cache, std::string& source) {
  std::string error;
  if (files) {
    cache::FileLoadStats st;
    if (!cache::loadClusterFiles(cache, o.nodesFile, o.podsFile, error, &st)) {
      FLOG_ERROR(error);
      return 1;
    }
    source = std::to_string(st.nodes) + " nodes, " + std::to_string(st.pods) + " pods from files";
  } else if (!watch) {
    const cache::DemoFleet& demo = cache::demoFleet();
    cache.write().replaceNodes(demo.nodes);
    source = "the demo fleet (" + std::to_string(demo.nodes.size()) + " nodes)";
  }
  return 0;
}

// The API server's list and watch into the cache (and the binder, with --bind).
int startIngestor(const ServeOptions& o, const std::optional<engine::LeaderElectionConfig>& election,
                  cache::Cache& cache, engine::Metrics& metrics, uv_loop_t* loop, engine::ExtenderService& service,
                  std::unique_ptr<engine::Ingestor>& ingestor, std::string& source) {
  engine::IngestOptions io;
  io.kubeconfig = o.kubeconfig;
  io.context = o.context;
  io.inCluster = o.inCluster;
  io.staleAfterMs = uint64_t{o.staleAfterSec} * 1000;
  io.leaderElection = election;
  if (!engine::parseIngestPriority(o.ingestPriority, io.priority)) {
    FLOG_ERROR(log::format("--ingest-priority %s: want idle, low or normal", o.ingestPriority.c_str()));
    return 1;
  }
  if (!engine::parseCpuList(o.ingestCpus, io.cpus)) {
    FLOG_ERROR(log::format("--ingest-cpus %s: want a CPU list such as 1 or 0,2-3", o.ingestCpus.c_str()));
    return 1;
  }
  ingestor = std::make_unique<engine::Ingestor>(cache, metrics, io);
  std::string error;
  if (!ingestor->start(loop, error)) {
    FLOG_ERROR(error);
    return 1;
  }
  if (o.bind) service.enableBinding(ingestor.get());
  source = "the API server " + ingestor->server();
  if (election) {
    source += log::format("; binding only while leader (Lease %s/%s, identity %s, lease %u ms, renew deadline %u "
                          "ms, retry %u ms)",
                          election->leaseNamespace.c_str(), election->leaseName.c_str(), election->identity.c_str(),
                          election->leaseDurationMs, election->renewDeadlineMs, election->retryPeriodMs);
  }
  return 0;
}

// What the debug endpoints read: their own cache readers, so a request never waits for another.
struct DebugReaders {
  explicit DebugReaders(cache::Cache& c) : audit(c), nodes(c) {}
  cache::Reader audit;  // /debug/audit
  cache::Reader nodes;  // /debug/nodes
};

// /debug/* only with --enable-debug-handlers, on the probe listener when there is one (kept off
// the verbs listener), else on the verbs listener; elsewhere a 404 that says why.
void addDebugHandlers(const ServeOptions& o, engine::Server& server, engine::Server* probeServer, ServeState& state,
                      cache::Cache& cache, DebugReaders& readers, engine::ExtenderService& service,
                      const std::string& debugOff) {
  engine::Server& debugServer = probeServer != nullptr ? *probeServer : server;
  for (engine::Server* s : {&server, probeServer}) {
    if (s == nullptr || (o.enableDebugHandlers && s == &debugServer)) continue;
    s->addGet("/debug/", [&debugOff](std::string_view, engine::LocalResponse& out) {
      out.status = 404;
      out.body = debugOff;
    });
  }
  if (!o.enableDebugHandlers) return;
  // /debug/nodes: what the cache holds, one node a line, for people and scripts.
  debugServer.addGet("/debug/nodes", [&readers](std::string_view, engine::LocalResponse& out) {
    cache::Snapshot snap = readers.nodes.acquire();
    out.body = "NAME\tZONE\tCAPACITY\tGPU_MODEL\tGPUS_FREE/TOTAL\tMILLICPU_FREE\n";
    static constexpr const char* kCapacity[] = {"unknown", "on-demand", "spot", "reserved"};
    snap.forEachNode([&out](const plugins::NodeInfo& n) {
      int64_t total = n.scalarCount > 0 ? n.scalars[0].allocatable : 0;
      int64_t used = n.scalarCount > 0 ? n.scalars[0].used : 0;
      out.body.append(n.name).append("\t").append(n.zoneName.empty() ? "-" : n.zoneName).append("\t");
      out.body.append(kCapacity[static_cast<int>(n.capacityType)]).append("\t");
      out.body.append(n.gpuModelName.empty() ? "-" : n.gpuModelName).append("\t");
      out.body.append(std::to_string(total - used)).append("/").append(std::to_string(total)).append("\t");
      out.body.append(std::to_string(n.allocMilliCpu - n.usedMilliCpu)).append("\n");
    });
  });
  // /debug/audit: with an API server, the last comparison with a fresh pod list (taken every
  // --audit-interval); otherwise, and until the first comparison, the cache checked alone.
  debugServer.addGet("/debug/audit", [&state, &readers, &cache](std::string_view, engine::LocalResponse& out) {
    out.contentType = "application/json";
    if (!state.lastAudit.empty()) {
      out.body = state.lastAudit;
      return;
    }
    engine::AuditResult r;
    cache::Snapshot snap = readers.audit.acquire();
    engine::auditCache(snap, cache, r);
    out.body = std::move(r.json);
  });
  debugServer.addGet("/debug/pods/", [&service](std::string_view target, engine::LocalResponse& out) {
    service.debugPod(target, out);
  });
}

// The cache gauges, the stats and audit timers, the drain timer and the signals, on `loop`.
void startTimersAndSignals(const ServeOptions& o, uv_loop_t* loop, engine::Metrics& metrics, ServeState& state) {
  state.nodes = &metrics.gauge("cache_nodes", "Nodes in the cache");
  state.boundPods = &metrics.gauge("cache_pods", "Pods charged on nodes (reservations excluded)");
  state.waitingPods = &metrics.gauge("cache_waiting_pods", "Pods bound to nodes the cache does not know yet");
  state.reservationsLive = &metrics.gauge("reservations", "Live binder reservations", {{"state", "live"}});
  state.reservationsExpired = &metrics.counter("reservations_expired_total", "Reservations dropped by TTL");
  state.gpuOvercommits = &metrics.gauge("gpu_overcommits", "Per-GPU charges clipped at a whole GPU (drift)");

  uv_timer_init(loop, &state.drainTimer);
  state.drainTimer.data = &state;
  uv_timer_init(loop, &state.stats);
  state.stats.data = &state;
  uv_timer_start(&state.stats, onStats, 0, kStatsIntervalMs);
  state.auditMismatches = &metrics.gauge("audit_mismatched_nodes", "Nodes whose charges differ from a fresh pod list");
  uv_timer_init(loop, &state.auditTimer);
  state.auditTimer.data = &state;
  if (state.ingestor != nullptr && o.auditIntervalSec > 0) {
    uv_timer_start(&state.auditTimer, onAudit, uint64_t{o.auditIntervalSec} * 1000, uint64_t{o.auditIntervalSec} * 1000);
  }
  for (auto [sig, signum] : {std::pair{&state.sigint, SIGINT}, {&state.sigterm, SIGTERM}, {&state.sighup, SIGHUP}}) {
    uv_signal_init(loop, sig);
    sig->data = &state;
    uv_signal_start(
        sig,
        [](uv_signal_t* h, int signum) {
          auto& s = *static_cast<ServeState*>(h->data);
          if (signum == SIGHUP) {
            if (!s.options->nodesFile.empty() || !s.options->podsFile.empty()) reloadFiles(s);
            return;
          }
          onStopSignal(s, signum);
        },
        signum);
  }
}

}  // namespace

int runServe(const ServeOptions& o) {
  if (int rc = setupLogging(o); rc != 0) return rc;
  engine::ServerConfig serverConfig, probeConfig;
  std::optional<engine::TlsReloader> tlsReloader;
  if (int rc = listenerConfigs(o, serverConfig, probeConfig, tlsReloader); rc != 0) return rc;
  const bool watch = !o.kubeconfig.empty() || o.inCluster;
  const bool files = !o.nodesFile.empty() || !o.podsFile.empty();
  std::optional<engine::LeaderElectionConfig> election;
  if (int rc = electionConfig(o, watch, files, election); rc != 0) return rc;
  std::optional<plugins::Config> config;
  if (int rc = loadProfiles(o, config); rc != 0) return rc;

  // The cache reads nodes and pods the way the profiles' plugins do (GPU resourceNames and
  // productLabel, Zone workloadLabels): built from the same validated configuration.
  cache::Cache cache(config->interpretation());
  std::string source;
  if (int rc = fillCache(o, watch, files, cache, source); rc != 0) return rc;

  uv_loop_t* loop = uv_default_loop();
  engine::Metrics metrics;
  {
    const cmd::BuildInfo b = cmd::buildInfo();
    metrics
        .gauge("build_info", "1, labelled with the build's version, commit and compiler",
               {{"version", b.version}, {"commit", b.gitCommit}, {"compiler", b.compiler}})
        .set(1);
  }
  engine::ProcessMetrics processMetrics(metrics);
  metrics.setBeforeRender([&processMetrics] { processMetrics.update(); });
  engine::ServiceOptions serviceOptions;
  serviceOptions.traceEvery = o.traceEvery;
  serviceOptions.debugDecisions = o.enableDebugHandlers ? o.debugDecisions : 0;
  serviceOptions.bindNeedsVerifiedFilter = !o.clientCaFile.empty();
  // One body limit: what the HTTP layer accepts, the decoder decodes.
  serviceOptions.maxBodyBytes = serverConfig.maxBodyBytes;
  // Filter and prioritize bodies of engine::kOffLoopBodyBytes or more are evaluated on the
  // service's worker thread and answered on this loop.
  serviceOptions.loop = loop;
  engine::ExtenderService service(cache, *config, metrics, serviceOptions);
  engine::Server server(loop, serverConfig, service, metrics);
  std::optional<engine::Server> probeServer;
  if (!o.probeListen.empty()) probeServer.emplace(loop, probeConfig, service, metrics);

  ServeState state;
  std::unique_ptr<engine::Ingestor> ingestor;
  if (watch) {
    if (int rc = startIngestor(o, election, cache, metrics, loop, service, ingestor, source); rc != 0) return rc;
  }
  // Ready once the first full sync of nodes and pods is cached (at once without an API server)
  // and while no watch has been failing longer than --stale-after; not ready once SIGTERM
  // started the drain (the probe listener still answers until the end).
  service.setReadyCheck(
      [ing = ingestor.get(), &state] { return !state.stopping && (!ing || (ing->synced() && ing->fresh())); });

  DebugReaders debugReaders(cache);
  const std::string debugOff = o.enableDebugHandlers
                                   ? "/debug/* is served on --probe-listen " + o.probeListen + "\n"
                                   : "/debug/* is off: start fleetsched serve with --enable-debug-handlers\n";
  addDebugHandlers(o, server, probeServer ? &*probeServer : nullptr, state, cache, debugReaders, service, debugOff);

  if (int rc = server.listen(); rc != 0) {
    FLOG_ERROR(log::format("listen %s: %s%s", o.listen.c_str(), uv_strerror(rc),
                           rc == UV_EADDRINUSE && !o.reusePort
                               ? " (another process holds the port; --reuse-port shares it with processes that set "
                                 "it too)"
                               : ""));
    return 1;
  }
  if (probeServer) {
    if (int rc = probeServer->listen(); rc != 0) {
      FLOG_ERROR(log::format("--probe-listen %s: %s", o.probeListen.c_str(), uv_strerror(rc)));
      return 1;
    }
  }

  state.options = &o;
  state.metrics = &metrics;
  cache::Reader statsReader(cache);
  state.statsReader = &statsReader;
  state.cache = &cache;
  state.server = &server;
  state.probeServer = probeServer ? &*probeServer : nullptr;
  if (tlsReloader) {
    tlsReloader->start(loop, server, metrics, kTlsReloadCheckMs);
    state.tlsReloader = &*tlsReloader;
  }
  state.ingestor = ingestor.get();
  startTimersAndSignals(o, loop, metrics, state);

  FLOG_INFO(log::format("fleetsched %s: serving on %s://%s:%u%s%s with %zu profile(s), scheduling against %s",
                        "serve", serverConfig.tls ? "https" : "http", serverConfig.host.c_str(), server.port(),
                        serverConfig.urlPrefix.c_str(), o.clientCaFile.empty() ? "" : " (client certificates required)",
                        config->profiles().size(), source.c_str()));
  if (probeServer) {
    FLOG_INFO(log::format("fleetsched serve: probes and metrics on http://%s:%u", probeConfig.host.c_str(),
                          probeServer->port()));
  }
  uv_run(loop, UV_RUN_DEFAULT);
  if (o.profile) {
    std::string summary;
    metrics.renderSummary(summary);
    std::fputs(summary.c_str(), stderr);
  }
  return 0;
}

}  // namespace fleetsched::cmd
