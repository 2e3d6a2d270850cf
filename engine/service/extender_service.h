// ExtenderService: the extender verbs behind the reactor. One batch = one cache snapshot; each
// request is decoded in place (codec), run through the pod's profile (plugins) against the
// snapshot's nodes, and encoded as Go's encoding/json would (codec).
//
//   NodeNames mode  every name is looked up in a codec::NodeNameTable (per node set); a name the
//                   cache does not know is reported in FailedNodes, never dropped. The replies
//                   are written from that table and the verdicts (codec/encoder.h).
//   Nodes mode      each request node is turned into a NodeInfo; what the cache knows about a
//                   node of that name (pods bound, reservations, zone) is carried over, so
//                   accounting is the same in both modes. The reply echoes the input objects'
//                   bytes. Node objects equal to ones decoded before are copied from the
//                   decoder's memo instead (codec::Decoder::reusedNodes; up to one maximal
//                   document, 64 MB, of node bytes kept; with a worker, only the worker's
//                   decoder keeps one).
//
// Outcomes go back as HTTP 200 (kube-scheduler treats anything else as an outage); only an
// undecodable body gets 400 (413 when over the decoder's limit, ServiceOptions::maxBodyBytes).
//
// Bind (with enableBinding): the pod is the one remembered from its last filter/prioritize
// call; fleetsched re-checks the node against the current snapshot, picks the GPUs (the
// profile's selectGpus), reserves them in the cache so the next pod sees them at once, and
// posts the Binding (carrying the fleetsched.io/gpu-index annotation) from the ingestion
// thread; the reply is deferred until kube-apiserver answers. A failed Binding releases the
// reservation; otherwise the watch event showing the pod bound confirms it. Without
// enableBinding the verb answers an Error saying how to enable it. With
// ServiceOptions::bindNeedsVerifiedFilter, a bind (and the filter that remembered its pod) must
// have come over a TLS connection whose client certificate verified, or it is refused. Bind and preempt need the
// cache's writer lock and never wait for it on the reactor (see withWriter).
//
// Threads: everything runs on the reactor's loop thread, except, when the service is given the
// loop (ServiceOptions::loop), the evaluation of filter and prioritize requests whose body is
// offLoopBodyBytes or more: their decode, decision and encoding run on the service's one worker
// thread (an Evaluator of its own, a cache snapshot it pins when it starts the request, the
// request's body and response), one request at a time in arrival order. The request is deferred meanwhile (handler.h), and
// the reactor frames nothing after it on its connection (BatchHandler::answersOffLoop); when it
// is evaluated, the loop thread applies what it changes (the pod remembered for bind, metrics,
// the decision log) and completes it. Other connections are served meanwhile. The profile's
// plugins still run one request at a time (the Fleet and FGD policies keep memos): the worker
// holds a mutex while it decides, not while it decodes or encodes, and the loop takes it to
// decide, preempt and bind.
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache.h"
#include "codec/decoder.h"
#include "codec/extender.h"
#include "engine/reactor/handler.h"
#include "engine/reactor/metrics.h"
#include "engine/reactor/server.h"
#include "engine/service/binder.h"
#include "engine/service/decision_log.h"
#include "engine/service/evaluator.h"
#include "engine/service/owned_pod.h"
#include "log/log.h"
#include "plugins/config.h"
#include "plugins/cycle.h"
#include "plugins/profile.h"

namespace fleetsched::engine {

// Filter and prioritize bodies of this many bytes or more are evaluated off the loop thread: a
// full-Nodes body of new nodes decodes in about 1.7 ms per MiB, so a request below it holds other
// connections up for less than ~2 ms (bench/results/2026-12-08-one-cycle.md, "The off-loop
// threshold"). A NodeNames body of 5,000 names is 232 KB.
constexpr size_t kOffLoopBodyBytes = 1u << 20;

struct ServiceOptions {
  // Print one line per N requests with per-phase timings (0: off).
  uint32_t traceEvery = 0;
  // Keep the last filter and prioritize decision of this many pods for debugPod (0: none).
  size_t debugDecisions = 0;
  // Bind only a pod whose last filter came over a connection whose client certificate verified
  // (ExtenderRequest::peerVerified: `serve --client-ca-file`), and only on such a connection.
  // Pod UIDs are readable by anyone who can list pods: without this, whoever reaches the port
  // could filter and then bind any pod with fleetsched's credentials.
  bool bindNeedsVerifiedFilter = false;
  // The decoder's limit on one body: serve passes ServerConfig::maxBodyBytes, the HTTP layer's
  // limit, so a body the reactor accepts is never refused by the decoder (both default to 64 MiB).
  size_t maxBodyBytes = codec::kDefaultMaxDocumentBytes;
  // The loop handleBatch is called on. Given, filter and prioritize requests of
  // offLoopBodyBytes or more are evaluated on the service's worker thread and completed on this
  // loop (see above); null (tests, benchmarks): every request is answered inside handleBatch.
  uv_loop_t* loop = nullptr;
  size_t offLoopBodyBytes = kOffLoopBodyBytes;
};

class ExtenderService : public BatchHandler {
 public:
  ExtenderService(cache::Cache& cache, const plugins::Config& config, Metrics& metrics,
                  ServiceOptions options = {});
  // With a loop: call on the loop's thread once no request handed to the worker is left
  // (uv_run returns only then: the service keeps the loop alive while one is).
  ~ExtenderService() override;

  void handleBatch(std::span<ExtenderRequest*> batch) override;
  // Filter and prioritize bodies of options.offLoopBodyBytes or more, when given a loop.
  bool answersOffLoop(const ExtenderRequest& req) const override;
  bool ready() const override { return !readyCheck_ || readyCheck_(); }

  // /readyz follows `check` (e.g. the watch's initial sync); ready by default.
  void setReadyCheck(std::function<bool()> check) { readyCheck_ = std::move(check); }
  // Serves bind through `binder` (the Ingestor), which must outlive every bind in flight and
  // the service's pod deletions (Binder::watchPodDeletions).
  void enableBinding(Binder* binder);

  // GET /debug/pods/<namespace>/<name>: the pod's last recorded filter and prioritize decision,
  // node by node, as JSON; 400 for a path that does not name a pod the way Kubernetes names
  // them, 404 for a pod without a recorded decision (or with recording off).
  void debugPod(std::string_view target, LocalResponse& out) const;
  // The recorded decisions; null when options.debugDecisions is 0.
  const DecisionLog* decisions() const { return decisions_.get(); }

 private:
  struct OffLoop;

  // Applies, on the loop thread, what the filter or prioritize `e` just evaluated changes in
  // the service (metrics, the pod remembered for bind, the trace line, the decision log).
  void finish(const ExtenderRequest& req, Evaluator& e, const cache::Snapshot& snap);
  // Defers `req` and queues it for the worker.
  void offload(ExtenderRequest* req);
  void runWorker();
  static void onEvaluated(uv_async_t* handle);
  // Bind and preempt need the cache's writer lock (reserve, unreserve; pods' charges). The
  // reactor never waits for it: when the ingestion thread holds it, or earlier work already
  // waits, the request is deferred into writerQueue_ and runs, in order, once the ingestion
  // thread hands the turn back between two of its writes (Binder::afterIngestTurn).
  void withWriter(ExtenderRequest& req, const cache::Snapshot& snap);
  // Runs bind or preempt; false when the answer comes later (the Binding is in flight).
  bool runWithWriter(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w);
  void unreserveLater(std::string uid);
  void retryWriterLater();
  void drainWriterQueue();
  void preempt(ExtenderRequest& req, const cache::Snapshot& snap, const cache::Cache::Writer& w);
  // The current cycle's pod passes the profile's filters and fits cpu/memory/pods on `node`.
  bool fitsAfterEviction(const plugins::NodeInfo& node);
  bool bind(ExtenderRequest& req, cache::Cache::Writer& w);
  void badRequest(ExtenderRequest& req);
  // Answers a bind (its Error field) or preempt (503) that this replica must not serve
  // (Binder::bindRefusal: not the leader); false when it may.
  bool refuseNotLeader(ExtenderRequest& req);
  void remember(const codec::Pod& pod, bool peerVerified);
  void forget(const std::string& uid);
  // Reserves and posts the Binding; returns an error text when it cannot start.
  std::string startBind(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w);
  // A verified bind of a pod not filtered here: reads it from kube-apiserver (Binder::readPod),
  // remembers it and binds it through the writer queue; answers the request on failure.
  void readPodThenBind(ExtenderRequest& req, const std::string& who);
  // At -v=4 a line per decision, and the record for debugPod: both off cost one branch.
  bool explaining() const {
    return decisions_ != nullptr || log::enabled(Evaluator::kDecisionLogLevel);
  }
  void trace(const ExtenderRequest& req, const codec::Pod& pod, const Evaluator::Outcome& o);

  cache::Cache& cache_;
  cache::Reader reader_;
  const plugins::Config& config_;
  ServiceOptions options_;
  Binder* binder_ = nullptr;
  std::function<bool()> readyCheck_;
  // Pods seen by filter while binding is on, by UID, oldest evicted first, each forgotten once
  // its Binding succeeded (kube-scheduler filters a pod again before any later bind); with the
  // channel of the filter that remembered each (ExtenderRequest::peerVerified).
  struct RememberedPod {
    std::unique_ptr<OwnedPod> pod;
    bool peerVerified = false;
    std::list<std::string>::iterator order;  // its entry in rememberedOrder_
  };
  std::unordered_map<std::string, RememberedPod> remembered_;
  std::list<std::string> rememberedOrder_;  // oldest first
  struct WriterWork {
    ExtenderRequest* req;      // a deferred bind or preempt, or
    std::string unreserveUid;  // (req null) a failed Binding's reservation to release
  };
  std::deque<WriterWork> writerQueue_;
  bool retryPending_ = false;

  // Filter and prioritize on the loop thread.
  Evaluator evaluator_;
  // Bind and preempt (on the loop thread).
  codec::Decoder decoder_;
  codec::BindingArgs bindArgs_;
  codec::PaddedBuffer readPodBytes_;  // the pod readPodThenBind read, while it is decoded
  codec::PreemptionArgs preemptArgs_;
  std::vector<uint32_t> order_;  // preempt: victims by decreasing priority
  std::vector<std::string_view> keptUids_;
  plugins::Cycle cycle_;  // preempt's what-if, bind's re-check and GPU choice
  uint64_t requests_ = 0;
  std::unique_ptr<DecisionLog> decisions_;
  // The worker and its Evaluator; null without ServiceOptions::loop.
  std::unique_ptr<OffLoop> offLoop_;

  Histogram* parse_;
  Histogram* decide_;
  Histogram* encode_;
  Counter* decodeErrors_;
  Counter* unknownNodes_;
  Counter* writerWaits_;
  Counter* nodesReused_;
  Counter* notLeaderBinds_;
  Counter* notLeaderPreempts_;
  Counter* podsRead_;
  Gauge* rememberedGauge_;
};

}  // namespace fleetsched::engine
