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

// A duration in Go's notation as kube-scheduler's --leader-elect-* flags take it: one or more
// decimal numbers each with a unit of ms, s, m or h ("15s", "1.5s", "1m30s", "500ms"), in whole
// milliseconds, above 0 and below 2^32 ms. False for anything else.
bool parseDurationMs(std::string_view text, uint32_t& ms) {
  if (text.empty()) return false;
  double total = 0;
  while (!text.empty()) {
    size_t i = 0;
    double value = 0, scale = 0;
    bool digits = false;
    for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i) {
      if (text[i] == '.') {
        if (scale != 0) return false;
        scale = 1;
        continue;
      }
      digits = true;
      if (scale != 0) {
        scale /= 10;
        value += (text[i] - '0') * scale;
      } else {
        value = value * 10 + (text[i] - '0');
      }
    }
    if (!digits) return false;
    text.remove_prefix(i);
    double unit = 0;
    if (text.starts_with("ms")) {
      unit = 1, text.remove_prefix(2);
    } else if (text.starts_with("s")) {
      unit = 1000, text.remove_prefix(1);
    } else if (text.starts_with("m")) {
      unit = 60'000, text.remove_prefix(1);
    } else if (text.starts_with("h")) {
      unit = 3'600'000, text.remove_prefix(1);
    } else {
      return false;
    }
    total += value * unit;
  }
  // Decimal fractions are inexact in binary ("0.013s" sums to 13.000000000000002 ms): round, then
  // refuse what is not close to a whole millisecond ("1.5ms").
  const double whole = std::round(total);
  if (whole < 1 || whole >= 4294967296.0 || std::abs(total - whole) > 1e-6) return false;
  ms = static_cast<uint32_t>(whole);
  return true;
}

const CLI::Validator kDuration(
    [](std::string& value) {
      uint32_t ms = 0;
      return parseDurationMs(value, ms) ? std::string()
                                        : "want a duration such as 15s, 1.5s, 500ms or 1m (whole milliseconds, above 0)";
    },
    "DURATION");

// CLI11 hands `-v=4` (how kube users type it) over as the value "=4". Out of line: GCC 12 warns
// of an uninitialized string when it inlines this into CLI11's std::function.
[[gnu::noinline]] std::string dropLeadingEquals(std::string value) {
  if (value.size() > 1 && value[0] == '=') value.erase(0, 1);
  return value;
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

CLI::App* addServeCommand(CLI::App& app, ServeOptions& o) {
  CLI::App* cmd = app.add_subcommand("serve", "Serve kube-scheduler's extender verbs over HTTP");
  cmd->add_option("--listen", o.listen, "Address to listen on, HOST:PORT")->capture_default_str();
  cmd->add_option("--probe-listen", o.probeListen,
                  "Also listen on HOST:PORT for /healthz, /readyz and /metrics (and /debug/* with "
                  "--enable-debug-handlers; no verbs), so "
                  "--listen can stay on 127.0.0.1 while kubelet and Prometheus reach the pod IP");
  cmd->add_flag("--reuse-port", o.reusePort,
                "Set SO_REUSEPORT on the listening socket, so several fleetsched processes that all set it share "
                "the port (without it a second process on a port in use fails to start)");
  cmd->add_option("--url-prefix", o.urlPrefix, "Path prefix of the verbs: PREFIX/filter, PREFIX/prioritize, ...");
  cmd->add_option("--tls-cert-file", o.tlsCertFile,
                  "Serve HTTPS on --listen with this PEM certificate (then any intermediates); needs "
                  "--tls-private-key-file. The probe listener stays plain HTTP. The files are re-read every minute: new "
                  "connections get a renewed certificate (and client CA) without a restart");
  cmd->add_option("--tls-private-key-file", o.tlsPrivateKeyFile, "PEM private key of --tls-cert-file");
  cmd->add_option("--client-ca-file", o.clientCaFile,
                  "With --tls-cert-file: every connection must present a client certificate that chains to a CA "
                  "in this PEM file (kube-scheduler's extender tlsConfig certFile/keyFile), or its handshake "
                  "fails; bind then accepts only pods that such a connection filtered");
  cmd->add_option("--config", o.configFile, "FleetschedConfiguration YAML (default: the built-in default profile)");
  cmd->add_option("--nodes", o.nodesFile, "Nodes from a file (`kubectl get nodes -o json`), reloaded on SIGHUP");
  cmd->add_option("--pods", o.podsFile, "Bound pods from a file (`kubectl get pods -A -o json`), reloaded on SIGHUP");
  cmd->add_flag("--allow-empty-fleet", o.allowEmptyFleet,
                "Accept a SIGHUP reload whose nodes file holds no node (by default it is refused and the previous "
                "fleet kept)");
  cmd->add_flag("--demo-fleet", o.demoFleet, "Schedule against the embedded demo GPU fleet (the default without a node source)");
  cmd->add_option("--kubeconfig", o.kubeconfig, "Watch nodes and pods through this kubeconfig");
  cmd->add_option("--context", o.context, "kubeconfig context (default: current-context)");
  cmd->add_flag("--in-cluster", o.inCluster, "Watch nodes and pods with the pod's service account");
  cmd->add_flag("--bind", o.bind, "Serve the bind verb: reserve GPUs and post Bindings (needs an API server)");
  cmd->add_option("--max-body-bytes", o.maxBodyBytes,
                  "Largest request body, 413 beyond; the decoder has the same limit (0: the default, 64 MiB)");
  cmd->add_option("--max-connections", o.maxConnections, "Most client connections, 503 beyond (0: the server's default)");
  cmd->add_option("--first-byte-timeout", o.firstByteTimeoutSec,
                  "Seconds a new connection may stay silent before it is closed without an answer, so silent "
                  "sockets cannot hold every slot for the 120 s idle timeout; at most 3600 (0: the idle "
                  "timeout applies)")
      ->check(CLI::Range(0u, 3600u).description(""))
      ->capture_default_str();
  cmd->add_option("--max-connections-per-client", o.maxConnectionsPerClient,
                  "Most connections from one client IP address; beyond, new ones are closed at once (0: no "
                  "limit)")
      ->capture_default_str();
  cmd->add_option("--max-buffered-bytes", o.maxBufferedBytes,
                  "Most bytes of request bodies held and answers not yet sent, over all connections of a "
                  "listener; a body that would go past it gets 503, and clients with unsent answers are not "
                  "read meanwhile. At least --max-body-bytes; keep it, 5x --max-body-bytes and the fleet under "
                  "the container's memory limit (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--trace-every", o.traceEvery, "Log one line with per-phase timings every N requests (0: never)");
  cmd->add_flag("--profile", o.profile, "Print a per-phase latency breakdown on exit");
  cmd->add_option("--audit-interval", o.auditIntervalSec,
                  "Seconds between audits of the cache against a pod list taken at the watch's resourceVersion, "
                  "500 pods a page (0: off; each costs kube-apiserver a list of every pod)")
      ->capture_default_str();
  cmd->add_option("--shutdown-grace", o.shutdownGraceSec,
                  "Seconds SIGTERM and SIGINT wait for requests in flight (a bind waiting for kube-apiserver "
                  "included) before cutting them; meanwhile no new connection is accepted and /readyz answers "
                  "503. A second signal exits at once (0: no wait)")
      ->capture_default_str();
  cmd->add_option("--stale-after", o.staleAfterSec,
                  "Seconds a watch of nodes or pods may keep failing before /readyz answers 503: the cache is "
                  "missing changes (0: never)")
      ->capture_default_str();
  cmd->add_option("--ingest-priority", o.ingestPriority,
                  "CPU priority of the API-server ingestion thread: idle (SCHED_IDLE; requests preempt it, but it "
                  "starves when other work fills every core), low (SCHED_BATCH, nice 19), normal (shares cores "
                  "evenly with the reactor)")
      ->check(CLI::IsMember({"idle", "low", "normal"}).description(""))
      ->type_name("idle|low|normal")
      ->capture_default_str();
  cmd->add_option("--ingest-cpus", o.ingestCpus, "CPUs the ingestion thread may run on, e.g. 1 or 2-3 (default: any)");
  // Logs and explanations: the flags of kube components' logging.
  cmd->add_option("--logging-format", o.loggingFormat,
                  "Log format: text (klog's: I1206 02:41:25.570554 3576 file.cpp:502] \"msg\" key=\"value\") or "
                  "json (one object a line: ts, caller, msg, v, keys; errors as err)")
      ->check(CLI::IsMember({"text", "json"}).description(""))
      ->type_name("text|json")
      ->capture_default_str();
  cmd->add_option("-v,--v", o.verbosity,
                  "Log verbosity: info lines up to this level are written; 4 adds one line per filter and "
                  "prioritize decision (nodes asked, kept, reasons by count, top scores). -v 4, -v=4 and --v=4 "
                  "all work")
      ->transform(dropLeadingEquals, "", "")
      ->check(CLI::Range(0, 100).description(""))
      ->type_name("N")
      ->capture_default_str();
  cmd->add_flag("--enable-debug-handlers", o.enableDebugHandlers,
                "Serve /debug/nodes, /debug/audit and /debug/pods/NAMESPACE/NAME (each pod's last filter and "
                "prioritize, node by node), on the --probe-listen listener when set, else on --listen; without "
                "it /debug/* answers 404");
  cmd->add_option("--debug-decisions", o.debugDecisions,
                  "With --enable-debug-handlers: pods whose last filter and prioritize /debug/pods keeps, least "
                  "recently decided evicted first; each costs about 4 bytes per node in the cache (5,000 nodes: "
                  "20 KB), recorded on the request path, rendered when asked (0: none)")
      ->check(CLI::Range(0u, 1000000u).description(""))
      ->capture_default_str();
  cmd->add_flag("--leader-elect", o.leaderElect,
                "Run several replicas: only the holder of a coordination.k8s.io/v1 Lease binds and preempts (the "
                "others answer those verbs with an error naming the leader, and serve filter and prioritize from "
                "their own caches). A new leader lists the pods again before it binds; SIGTERM gives the Lease up "
                "once binds in flight are done. Needs --bind");
  cmd->add_option("--leader-elect-lease-duration", o.leaderElectLeaseDuration,
                  "How long followers wait, after they last saw the Lease change, before taking it over (whole "
                  "seconds)")
      ->check(kDuration)
      ->capture_default_str();
  cmd->add_option("--leader-elect-renew-deadline", o.leaderElectRenewDeadline,
                  "The leader stops binding when no renewal succeeded for this long; below the lease duration")
      ->check(kDuration)
      ->capture_default_str();
  cmd->add_option("--leader-elect-retry-period", o.leaderElectRetryPeriod,
                  "Between renewals, and between a follower's attempts (jittered up to 2.2x); renew deadline > 1.2x this")
      ->check(kDuration)
      ->capture_default_str();
  cmd->add_option("--leader-elect-resource-namespace", o.leaderElectResourceNamespace, "Namespace of the Lease")
      ->capture_default_str();
  cmd->add_option("--leader-elect-resource-name", o.leaderElectResourceName, "Name of the Lease")
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  # the embedded demo fleet on the default address\n"
      "  fleetsched serve\n"
      "  # nodes and pods watched through a kubeconfig, with the bind verb\n"
      "  fleetsched serve --kubeconfig ~/.kube/config --bind --config profiles.yaml\n"
      "  # inside the cluster, behind kube-scheduler's extender config\n"
      "  fleetsched serve --in-cluster --listen 0.0.0.0:8888 --url-prefix /fleetsched");
  cmd->callback([&o] {
    if (int rc = runServe(o); rc != 0) throw CLI::RuntimeError(rc);
  });
  return cmd;
}

int runServe(const ServeOptions& o) {
  {
    log::Format format = log::Format::kText;
    if (!log::parseFormat(o.loggingFormat, format)) {
      FLOG_ERROR(log::format("--logging-format %s: want text or json", o.loggingFormat.c_str()));
      return 1;
    }
    log::setFormat(format);
    log::setVerbosity(o.verbosity);
  }
  engine::ServerConfig serverConfig;
  if (!splitListen(o.listen, serverConfig.host, serverConfig.port)) {
    FLOG_ERROR(log::format("--listen %s: want HOST:PORT", o.listen.c_str()));
    return 1;
  }
  serverConfig.urlPrefix = o.urlPrefix;
  serverConfig.reusePort = o.reusePort;
  serverConfig.firstByteTimeoutMs = o.firstByteTimeoutSec * 1000;  // at most 3600 s (the flag's check)
  serverConfig.maxConnectionsPerClient = o.maxConnectionsPerClient;
  engine::ServerConfig probeConfig = serverConfig;
  probeConfig.serveVerbs = false;
  probeConfig.urlPrefix.clear();
  probeConfig.metricLabels = {{"listener", "probes"}};
  if (!o.probeListen.empty() && !splitListen(o.probeListen, probeConfig.host, probeConfig.port)) {
    FLOG_ERROR(log::format("--probe-listen %s: want HOST:PORT", o.probeListen.c_str()));
    return 1;
  }
  if (o.maxBodyBytes != 0) serverConfig.maxBodyBytes = o.maxBodyBytes;
  if (o.maxConnections != 0) serverConfig.maxConnections = o.maxConnections;
  // HTTPS on the verbs listener only (probeConfig is a copy taken before), its files re-read
  // every kTlsReloadCheckMs.
  std::optional<engine::TlsReloader> tlsReloader;
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

  const bool watch = !o.kubeconfig.empty() || o.inCluster;
  const bool files = !o.nodesFile.empty() || !o.podsFile.empty();
  if (watch && (files || o.demoFleet)) {
    FLOG_ERROR("choose one node source: an API server, files, or --demo-fleet");
    return 1;
  }
  if (o.bind && !watch) {
    FLOG_ERROR("--bind needs an API server (--kubeconfig or --in-cluster)");
    return 1;
  }
  std::optional<engine::LeaderElectionConfig> election;
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

  std::string error;
  std::optional<plugins::Config> config;
  if (o.configFile.empty()) {
    config.emplace(plugins::defaultConfig());
  } else {
    config = plugins::loadConfigFile(o.configFile, error);
    if (!config) {
      FLOG_ERROR(error);
      return 1;
    }
  }

  // The cache reads nodes and pods the way the profiles' plugins do (GPU resourceNames and
  // productLabel, Zone workloadLabels): built from the same validated configuration.
  cache::Cache cache(config->interpretation());
  std::string source;
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
  }
  // Ready once the first full sync of nodes and pods is cached (at once without an API server)
  // and while no watch has been failing longer than --stale-after; not ready once SIGTERM
  // started the drain (the probe listener still answers until the end).
  service.setReadyCheck(
      [ing = ingestor.get(), &state] { return !state.stopping && (!ing || (ing->synced() && ing->fresh())); });

  // /debug/audit: with an API server, the last comparison with a fresh pod list (taken every
  // --audit-interval); otherwise, and until the first comparison, the cache checked alone.
  cache::Reader auditReader(cache);
  // /debug/nodes: what the cache holds, one node a line, for people and scripts.
  cache::Reader nodesReader(cache);
  // /debug/* only with --enable-debug-handlers, on the probe listener when there is one (kept
  // off the verbs listener), else on the verbs listener; elsewhere a 404 that says why.
  engine::Server& debugServer = probeServer ? *probeServer : server;
  const std::string debugOff = o.enableDebugHandlers
                                   ? "/debug/* is served on --probe-listen " + o.probeListen + "\n"
                                   : "/debug/* is off: start fleetsched serve with --enable-debug-handlers\n";
  for (engine::Server* s : {&server, probeServer ? &*probeServer : nullptr}) {
    if (s == nullptr || (o.enableDebugHandlers && s == &debugServer)) continue;
    s->addGet("/debug/", [&debugOff](std::string_view, engine::LocalResponse& out) {
      out.status = 404;
      out.body = debugOff;
    });
  }
  if (o.enableDebugHandlers) debugServer.addGet("/debug/nodes", [&nodesReader](std::string_view, engine::LocalResponse& out) {
    cache::Snapshot snap = nodesReader.acquire();
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
  if (o.enableDebugHandlers) debugServer.addGet("/debug/audit", [&](std::string_view, engine::LocalResponse& out) {
    out.contentType = "application/json";
    if (!state.lastAudit.empty()) {
      out.body = state.lastAudit;
      return;
    }
    engine::AuditResult r;
    cache::Snapshot snap = auditReader.acquire();
    engine::auditCache(snap, cache, r);
    out.body = std::move(r.json);
  });
  if (o.enableDebugHandlers) {
    debugServer.addGet("/debug/pods/", [&service](std::string_view target, engine::LocalResponse& out) {
      service.debugPod(target, out);
    });
  }

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
  if (ingestor && o.auditIntervalSec > 0) {
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
