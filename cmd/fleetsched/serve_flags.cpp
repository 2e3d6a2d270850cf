// serve's flags: CLI11 options with their checks, help text and examples; runServe (serve.cpp)
// does what they ask.
#include <cctype>
#include <cmath>
#include <string>
#include <string_view>

#include "cmd/fleetsched/cli.h"
#include "cmd/fleetsched/serve.h"

namespace fleetsched::cmd {

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

namespace {

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

}  // namespace fleetsched::cmd
