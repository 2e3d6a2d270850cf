// `fleetsched loadgen`: an HTTP/1.1 keep-alive load generator on one libuv loop that replays
// what kube-scheduler sends an extender: per pod, a filter call and then (after its reply) a
// prioritize call with the same pod and only the nodes filter kept, as kube-scheduler sends only
// feasible nodes to prioritize (and none at all when one or no node is feasible: it then takes
// that node, or finds the pod unschedulable, without scoring). By default (static) the prioritize
// body for each corpus pod is built from its first filter reply: the load generator does not
// bind, so the server's answer does not change during a run.
//
// Churn (`--churn`, churn.h): the load generator also runs a fake kube-apiserver
// (`--apiserver-port`) that `fleetsched serve --kubeconfig --bind` watches; each pod is created
// there with a UID of its own, filtered, prioritized and bound to the node the scores select,
// and shows up bound in the server's pod watch (its node charged for the pods after it) until it
// is deleted `podLifetime` seconds later. Not the default: it needs the server started against
// the load generator's API server, while the static mode runs against any extender.
//
// Node order: by default each pod's candidate list is in the order kube-scheduler's parallel
// filter would append it (kube_order.h: zone round robin, 16 goroutines over chunks of √n,
// interleaved, a different order per corpus pod), so the server cannot recognise a list it
// saw for the previous pod. `--order repeated` sends every pod the same list in fleet order,
// as this tool did before; the gap between the two is what a cache of the last list is worth.
//
// Closed loop: `connections` × `depth` pods in flight, each starting as soon as the previous one
// finished. Open loop: pods start at a fixed rate; every latency is measured from the pod's
// *intended* start, so time spent waiting for a free connection counts (no coordinated
// omission). Results: per-verb and per-pod latency histograms, printed as a table and written
// as JSON and an SVG percentile plot on request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/loadgen/latency_histogram.h"

namespace fleetsched::tools::loadgen {

enum class ArgsMode : uint8_t { kNodeNames, kFull };
enum class NodeOrder : uint8_t { kKubeScheduler, kRepeated };

struct LoadgenOptions {
  std::string target = "127.0.0.1:8888";  // HOST:PORT
  std::string urlPrefix;                  // routes are PREFIX/filter and PREFIX/prioritize
  ArgsMode mode = ArgsMode::kNodeNames;
  NodeOrder order = NodeOrder::kKubeScheduler;
  int parallelism = 16;               // kube-scheduler's parallelism (order model)
  int percentageOfNodesToScore = 100;  // as the project's manifests set it (0: adaptive)

  // Request corpus: rebuilt in memory from the generator (same options as gen-fleet, or read from
  // DIR/corpus.json when `corpusDir` is set), built from a cluster's NodeList and PodList
  // (`nodesFile`, `podsFile`: kubectl get -o json), or read as NDJSON bodies from `requestsFile`.
  std::string corpusDir;
  std::string nodesFile;
  std::string podsFile;
  std::string requestsFile;
  size_t corpusNodes = 1000;
  size_t corpusPods = 256;  // distinct pod bodies cycled through
  uint64_t seed = 1;
  size_t fullModeNodes = 500;  // full mode: the first N nodes of the fleet
  size_t minNodeBytes = 10 * 1024;
  size_t maxNodeBytes = 14 * 1024;
  double cpuOnlyFraction = 0.2;
  bool filterOnly = false;  // skip prioritize
  // Send prioritize the same nodes as filter (this tool's behaviour before it followed
  // kube-scheduler; also what --requests-file bodies get, since it cannot split them).
  bool prioritizeAllNodes = false;

  int connections = 1;
  int depth = 1;         // pods in flight per connection (pipelined)
  double rate = 0;       // pods/s; > 0 selects the open loop
  double duration = 10;  // seconds measured, after warmup
  double warmup = 1;     // seconds run but not recorded
  uint64_t maxPods = 0;  // stop after this many measured pods (0: duration only)
  int cpu = -1;          // pin to this CPU (sched_setaffinity)

  // A fake kube-apiserver on 127.0.0.1:apiserverPort (0: any free port; -1: none) serving the
  // corpus fleet's nodes and the churn's pods; the run waits up to readyTimeout s for the
  // target's /readyz first. kubeconfigOut: write its kubeconfig there for `serve --kubeconfig`.
  int apiserverPort = -1;
  std::string kubeconfigOut;
  double readyTimeout = 60;
  bool churn = false;       // per pod: create, filter, prioritize, bind (needs apiserverPort)
  double podLifetime = 5;   // churn: seconds a bound pod lives before the API server deletes it

  std::string label;     // names the run in JSON/plots (default: target)
  std::string jsonOut;   // write results as JSON here
  std::string svgOut;    // write the latency plot here
  bool quiet = false;    // no table on stdout
};

struct VerbResult {
  LatencyHistogram latency;
  uint64_t errors = 0;  // non-200 replies and failed connections
};

struct LoadgenResult {
  VerbResult filter, prioritize, bind, pod;  // pod: filter to the last reply (bind's in churn)
  double seconds = 0;  // measured window
  uint64_t pods = 0;   // completed, measured (filter and prioritize)
  uint64_t podsWithoutPrioritize = 0;  // measured pods filter left with ≤ 1 node: no prioritize
  uint64_t requests = 0;
  uint64_t bytesSent = 0;
  uint64_t bytesReceived = 0;
  uint64_t reconnects = 0;
  // Churn: measured pods filter left no node (not bound, not in pods/s), and what the fake API
  // server saw over the whole run (warmup included).
  uint64_t podsUnschedulable = 0;
  uint64_t apiPodsBound = 0;      // Bindings accepted
  uint64_t apiPodsDeleted = 0;    // after their lifetime, or unschedulable
  uint64_t apiBindingsRefused = 0;
  uint64_t apiLiveBound = 0;      // bound pods alive at the end
  double podsPerSecond() const { return seconds > 0 ? static_cast<double>(pods) / seconds : 0; }
};

// Runs the load described by `options`; returns false (after printing why) when it could not
// run at all: bad options, unreadable corpus, no connection.
bool runLoad(const LoadgenOptions& options, LoadgenResult& result);

// Table / JSON / SVG renderings of a result.
std::string formatTable(const LoadgenOptions& options, const LoadgenResult& result);
std::string formatJson(const LoadgenOptions& options, const LoadgenResult& result);
std::string formatSvg(const LoadgenOptions& options, const LoadgenResult& result);

// runLoad, then the outputs the options ask for. Returns a process exit code: 0, 1 when the run
// failed, 3 when any request failed.
int runLoadgen(const LoadgenOptions& options);

}  // namespace fleetsched::tools::loadgen
