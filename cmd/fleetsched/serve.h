// `fleetsched serve`: the extender server.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace fleetsched::cmd {

struct ServeOptions {
  std::string listen = "127.0.0.1:8888";
  std::string probeListen;  // HOST:PORT of a second listener for /healthz, /readyz, /metrics; empty: none
  bool reusePort = false;  // SO_REUSEPORT: share the port with other processes that set it too
  std::string urlPrefix;
  // HTTPS on --listen (the probe listener stays plain): server certificate and key (PEM), and the
  // CA that every client certificate must chain to (empty: none asked for).
  std::string tlsCertFile;
  std::string tlsPrivateKeyFile;
  std::string clientCaFile;
  std::string configFile;
  std::string nodesFile;
  std::string podsFile;
  bool demoFleet = false;
  bool allowEmptyFleet = false;  // SIGHUP may load a nodes file without nodes
  std::string kubeconfig;
  std::string context;
  bool inCluster = false;
  bool bind = false;
  uint64_t maxBodyBytes = 0;  // 0: the engine's default
  uint32_t maxConnections = 0;
  uint32_t firstByteTimeoutSec = 10;   // a connection silent this long after accept is closed
  uint32_t maxConnectionsPerClient = 256;  // per client IP address; 0: no limit
  // Request bodies held plus answers unsent, per listener; 503 beyond (engine::ServerConfig).
  uint64_t maxBufferedBytes = 256u << 20;  // engine::kDefaultMaxBufferedBytes
  uint32_t traceEvery = 0;
  bool profile = false;
  uint32_t auditIntervalSec = 300;
  // SIGTERM/SIGINT: seconds to let requests in flight finish before the rest is cut (0: none).
  uint32_t shutdownGraceSec = 20;
  uint32_t staleAfterSec = 60;  // /readyz fails once a watch has been failing this long (0: never)
  std::string ingestPriority = "idle";  // idle | low | normal
  std::string ingestCpus;               // kernel CPU list; empty: inherit
  // Logs and explanations (issue 26): klog text or JSON lines, -v levels.
  std::string loggingFormat = "text";  // text | json
  int verbosity = 0;                   // -v: info lines up to this level are written
  // /debug/* (nodes, audit, pods): off unless enabled; on the probe listener when there is one.
  bool enableDebugHandlers = false;
  // Leader election, in kube-scheduler's flags: with several replicas only the holder of the Lease
  // binds and preempts; the others serve filter and prioritize. Durations in Go's notation.
  bool leaderElect = false;
  std::string leaderElectLeaseDuration = "15s";
  std::string leaderElectRenewDeadline = "10s";
  std::string leaderElectRetryPeriod = "2s";
  std::string leaderElectResourceNamespace = "kube-system";
  std::string leaderElectResourceName = "fleetsched";
  uint32_t debugDecisions = 256;  // pods whose last decisions /debug/pods keeps (with the handlers on)
};

// serve_flags.cpp: the flags, and the duration notation --leader-elect-* take.
CLI::App* addServeCommand(CLI::App& app, ServeOptions& options);
// A duration in Go's notation as kube-scheduler's --leader-elect-* flags take it: one or more
// decimal numbers each with a unit of ms, s, m or h ("15s", "1.5s", "1m30s", "500ms"), in whole
// milliseconds, above 0 and below 2^32 ms. False for anything else.
bool parseDurationMs(std::string_view text, uint32_t& ms);
// serve.cpp: runs what the flags ask for until SIGTERM; the exit code.
int runServe(const ServeOptions& options);

}  // namespace fleetsched::cmd
