#include "engine/service/extender_service.h"

#include <uv.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cache/binding.h"
#include "codec/encoder.h"
#include "codec/k8s_names.h"
#include "log/log.h"

namespace fleetsched::engine {
namespace {

constexpr size_t kRememberedPods = 8192;
constexpr auto kReservationTtl = std::chrono::seconds(60);
constexpr std::string_view kNoBinder =
    "fleetsched does not bind here: start it with --bind and an API server (--kubeconfig or --in-cluster)";

}  // namespace

// The worker thread and what it shares with the loop thread. The worker takes requests from
// `queue` one at a time, pins a snapshot with its own reader, evaluates the request with its
// own evaluator into the request's response, then lends the evaluator and the snapshot to the
// loop thread: `done`, and `evaluated` wakes the loop. The loop thread finishes the request
// (ExtenderService::finish), clears `done` and completes the request; meanwhile the worker
// waits, then releases the snapshot itself (a cache::Reader is one thread's) and takes the next. One worker rather than libuv's pool of 4: each
// such request holds ~4 bytes of simdjson index per body byte while it is decoded (a second at
// once would add ~250 MB at 64 MB), on 2 cores a second would only share the other core, and
// one decoder keeps its full-Nodes memo warm from one request to the next.
struct ExtenderService::OffLoop {
  OffLoop(cache::Cache& cache, const plugins::Config& config, size_t maxBodyBytes)
      : evaluator(config, cache.interpretation(), maxBodyBytes), reader(cache) {}

  Evaluator evaluator;    // the worker's, lent to the loop thread while `done` is set
  cache::Reader reader;   // the worker's

  uv_async_t evaluated;  // worker -> loop: `done` is set; referenced only while inFlight > 0
  size_t inFlight = 0;   // loop thread: requests handed over and not completed
  bool closed = false;   // loop thread: `evaluated` was closed

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<ExtenderRequest*> queue;  // (mutex) waiting for the worker, in arrival order
  ExtenderRequest* done = nullptr;     // (mutex) evaluated; the loop thread has the evaluator
  const cache::Snapshot* snap = nullptr;  // (mutex) what `done` was decided on, while it is set
  bool stop = false;                   // (mutex)
  std::thread thread;
};

ExtenderService::ExtenderService(cache::Cache& cache, const plugins::Config& config, Metrics& metrics,
                                 ServiceOptions options)
    : cache_(cache),
      reader_(cache),
      config_(config),
      options_(options),
      // With a worker, only its decoder keeps a full-Nodes memo (up to one maximal body of node
      // bytes; a second would add as much again): the loop's decodes bodies under
      // offLoopBodyBytes in full, in under ~2 ms by the threshold's measure.
      evaluator_(config, cache.interpretation(), options.maxBodyBytes, options.loop == nullptr),
      decoder_(options.maxBodyBytes) {
  if (options_.debugDecisions > 0) decisions_ = std::make_unique<DecisionLog>(options_.debugDecisions);
  const char* help = "Time spent per request phase";
  parse_ = &metrics.histogram("phase_duration_seconds", help, {{"phase", "parse"}});
  decide_ = &metrics.histogram("phase_duration_seconds", help, {{"phase", "decide"}});
  encode_ = &metrics.histogram("phase_duration_seconds", help, {{"phase", "encode"}});
  decodeErrors_ = &metrics.counter("decode_errors_total", "Extender requests whose body could not be decoded");
  unknownNodes_ = &metrics.counter("unknown_nodes_total", "Node names in requests that the cache does not know");
  writerWaits_ = &metrics.counter("cache_writer_waits_total",
                                  "Bind and preempt requests that waited for the cache writer lock (held by "
                                  "ingestion) instead of blocking the reactor");
  const char* notLeader = "Bind and preempt requests refused because this replica is not the leader (serve --leader-elect)";
  notLeaderBinds_ = &metrics.counter("not_leader_total", notLeader, {{"verb", "bind"}});
  notLeaderPreempts_ = &metrics.counter("not_leader_total", notLeader, {{"verb", "preempt"}});
  podsRead_ = &metrics.counter("bind_pods_read_total",
                               "Binds of pods filtered by another replica, read from kube-apiserver to bind them");
  rememberedGauge_ = &metrics.gauge("bind_pods_remembered",
                                    "Filtered pods kept for their bind (serve --bind), forgotten once bound or deleted");
  nodesReused_ = &metrics.counter("full_nodes_reused_total",
                                  "Node objects in full-Nodes requests equal to ones decoded before, not decoded again");
  if (options_.loop != nullptr) {
    offLoop_ = std::make_unique<OffLoop>(cache, config, options.maxBodyBytes);
    uv_async_init(options_.loop, &offLoop_->evaluated, &ExtenderService::onEvaluated);
    offLoop_->evaluated.data = this;
    uv_unref(reinterpret_cast<uv_handle_t*>(&offLoop_->evaluated));  // nothing in flight yet
    offLoop_->thread = std::thread([this] { runWorker(); });
  }
}

ExtenderService::~ExtenderService() {
  if (!offLoop_) return;
  OffLoop& o = *offLoop_;
  {
    std::lock_guard lock(o.mutex);
    o.stop = true;
  }
  o.wake.notify_one();
  o.thread.join();
  o.done = nullptr;  // never finished (the caller broke the contract): its snapshot is gone
  uv_close(reinterpret_cast<uv_handle_t*>(&o.evaluated),
           [](uv_handle_t* h) { static_cast<ExtenderService*>(h->data)->offLoop_->closed = true; });
  while (!o.closed) uv_run(options_.loop, UV_RUN_NOWAIT);
}

bool ExtenderService::answersOffLoop(const ExtenderRequest& req) const {
  return offLoop_ != nullptr && (req.verb == Verb::Filter || req.verb == Verb::Prioritize) &&
         req.body.size() >= options_.offLoopBodyBytes;
}

void ExtenderService::handleBatch(std::span<ExtenderRequest*> batch) {
  // One snapshot for the whole batch: every request of the turn sees the same cluster.
  cache::Snapshot snap = reader_.acquire();
  for (ExtenderRequest* req : batch) {
    req->status = 200;
    req->response.clear();
    switch (req->verb) {
      case Verb::Filter:
      case Verb::Prioritize:
        if (answersOffLoop(*req)) {
          offload(req);
          break;
        }
        evaluator_.run(*req, snap);
        finish(*req, evaluator_, snap);
        break;
      case Verb::Preempt:
      case Verb::Bind:
        if (refuseNotLeader(*req)) break;
        withWriter(*req, snap);
        break;
    }
  }
}

void ExtenderService::finish(const ExtenderRequest& req, Evaluator& e, const cache::Snapshot& snap) {
  const Evaluator::Outcome& o = e.outcome();
  if (!o.decoded) {
    decodeErrors_->inc();
    return;
  }
  nodesReused_->inc(o.reusedNodes);
  unknownNodes_->inc(o.unknownNodes);
  if (req.verb == Verb::Filter) remember(e.pod(), req.peerVerified);
  trace(req, e.pod(), o);
  if (!explaining()) return;
  if (req.verb == Verb::Filter) {
    e.explainFilter(snap, decisions_.get());
  } else {
    e.explainPrioritize(snap, decisions_.get());
  }
}

void ExtenderService::offload(ExtenderRequest* req) {
  OffLoop& o = *offLoop_;
  req->deferred = true;
  // Keeps uv_run going until the answer is in: the worker reads the request's body, which the
  // reactor frees only after complete() (a server stopped meanwhile included).
  if (o.inFlight++ == 0) uv_ref(reinterpret_cast<uv_handle_t*>(&o.evaluated));
  {
    std::lock_guard lock(o.mutex);
    o.queue.push_back(req);
  }
  o.wake.notify_one();
}

void ExtenderService::runWorker() {
  OffLoop& o = *offLoop_;
  std::unique_lock lock(o.mutex);
  for (;;) {
    o.wake.wait(lock, [&o] { return o.stop || !o.queue.empty(); });
    if (o.stop) return;
    ExtenderRequest* req = o.queue.front();
    o.queue.pop_front();
    lock.unlock();
    const cache::Snapshot snap = o.reader.acquire();
    o.evaluator.run(*req, snap);
    lock.lock();
    o.done = req;
    o.snap = &snap;
    uv_async_send(&o.evaluated);
    o.wake.wait(lock, [&o] { return o.stop || o.done == nullptr; });
  }
}

void ExtenderService::onEvaluated(uv_async_t* handle) {
  auto* self = static_cast<ExtenderService*>(handle->data);
  OffLoop& o = *self->offLoop_;
  ExtenderRequest* req = nullptr;
  const cache::Snapshot* snap = nullptr;
  {
    std::lock_guard lock(o.mutex);
    req = o.done;
    snap = o.snap;
  }
  if (req == nullptr) return;
  // The worker waits while `done` is set: the evaluator is this thread's now.
  self->finish(*req, o.evaluator, *snap);
  {
    std::lock_guard lock(o.mutex);
    o.done = nullptr;
  }
  o.wake.notify_one();
  if (--o.inFlight == 0) uv_unref(reinterpret_cast<uv_handle_t*>(&o.evaluated));
  req->complete(req);
}

bool ExtenderService::refuseNotLeader(ExtenderRequest& req) {
  if (binder_ == nullptr) return false;
  std::string refusal = binder_->bindRefusal();
  if (refusal.empty()) return false;
  // The client's next request then opens a new connection, which a Service may hand to the
  // leader. kube-scheduler's HTTP client otherwise keeps reusing its most recently idle
  // connection: behind per-connection balancing it sent every call to the follower for a minute
  // (1,567 refused binds, none bound; tests/e2e/test_leader_kill.py).
  req.closeConnection = true;
  if (req.verb == Verb::Bind) {
    notLeaderBinds_->inc();
    codec::encodeBindingResult(refusal, req.response);
  } else {
    // ExtenderPreemptionResult has no Error field: kube-scheduler fails the preemption attempt on
    // any status but 200 (and logs the status only) and retries the pod later.
    notLeaderPreempts_->inc();
    req.status = 503;
    req.response = "preempt: " + refusal + "\n";
  }
  return true;
}

void ExtenderService::badRequest(ExtenderRequest& req) {
  decodeErrors_->inc();
  req.status = decoder_.error() == codec::DecodeError::TooLarge ? 413 : 400;
  req.response = std::string(verbName(req.verb)) + ": " + decoder_.errorMessage() + "\n";
}

bool ExtenderService::fitsAfterEviction(const plugins::NodeInfo& node) {
  return cycle_.filterOne(node).ok() && cache::resourcesFit(cycle_.pod(), node);
}

void ExtenderService::withWriter(ExtenderRequest& req, const cache::Snapshot& snap) {
  if (writerQueue_.empty()) {
    // Without an ingestion thread only the reactor itself writes: the lock is free.
    std::optional<cache::Cache::Writer> w =
        binder_ != nullptr ? cache_.tryWrite() : std::optional<cache::Cache::Writer>(cache_.write());
    if (w) {
      runWithWriter(req, snap, *w);
      return;
    }
  }
  writerWaits_->inc();
  req.deferred = true;
  writerQueue_.push_back(WriterWork{&req, {}});
  retryWriterLater();
}

bool ExtenderService::runWithWriter(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w) {
  if (req.verb == Verb::Preempt) {
    preempt(req, snap, w);
    return true;
  }
  return bind(req, w);
}

void ExtenderService::unreserveLater(std::string uid) {
  if (writerQueue_.empty()) {
    if (std::optional<cache::Cache::Writer> w = cache_.tryWrite()) {
      w->unreserve(uid);
      return;
    }
  }
  writerQueue_.push_back(WriterWork{nullptr, std::move(uid)});
  retryWriterLater();
}

void ExtenderService::retryWriterLater() {
  if (retryPending_) return;
  retryPending_ = true;
  // The ingestion thread runs the hop between two of its own writes, so the lock is free when
  // it starts; when the thread is starved (idle priority under load), the reactor keeps serving
  // filter and prioritize meanwhile instead of stalling every connection on the mutex.
  binder_->afterIngestTurn([this] {
    retryPending_ = false;
    drainWriterQueue();
  });
}

void ExtenderService::drainWriterQueue() {
  if (writerQueue_.empty()) return;
  std::optional<cache::Cache::Writer> w = cache_.tryWrite();
  if (!w) {
    retryWriterLater();
    return;
  }
  // In arrival order, each published before the next decides: a bind after an unreserve of the
  // same pod, or after another bind to the same node, sees what came before it.
  while (!writerQueue_.empty()) {
    WriterWork work = std::move(writerQueue_.front());
    writerQueue_.pop_front();
    if (work.req == nullptr) {
      w->unreserve(work.unreserveUid);
    } else {
      cache::Snapshot snap = reader_.acquire();
      if (runWithWriter(*work.req, snap, *w)) work.req->complete(work.req);
    }
    w->publish();
  }
}

void ExtenderService::preempt(ExtenderRequest& req, const cache::Snapshot& snap, const cache::Cache::Writer& w) {
  const uint64_t t0 = uv_hrtime();
  if (!decoder_.decodePreemptionArgs(req.body, preemptArgs_)) {
    badRequest(req);
    return;
  }
  const uint64_t parsed = uv_hrtime();
  auto& victims = preemptArgs_.hasMetaVictims ? preemptArgs_.nodeNameToMetaVictims : preemptArgs_.nodeNameToVictims;
  // A node offered without victims cannot be returned (kube-scheduler rejects a kept node with
  // none).
  std::erase_if(victims, [](const codec::NodeVictims& v) { return v.uids.empty(); });

  // kube-scheduler chose victims by its own accounting, which does not know which GPUs a pod
  // holds. Check each node with fleetsched's: evict the lowest-priority victims first until the
  // preemptor fits; victims not needed for that stay; a node where evicting every victim does
  // not make room is dropped. Nodes and victims fleetsched knows nothing about pass unchanged.
  const plugins::Profile& profile = config_.profileFor(preemptArgs_.pod);
  const bool judge = cycle_.begin(profile, preemptArgs_.pod, snap).ok() && cycle_.pod().wantsGpu();
  if (judge) {
    std::erase_if(victims, [&](codec::NodeVictims& v) {
      const plugins::NodeInfo* known = snap.find(v.node);
      if (known == nullptr) return false;
      plugins::NodeInfo sim = *known;
      if (fitsAfterEviction(sim)) return false;  // not a GPU shortage: kube-scheduler's call
      // Victims arrive in decreasing priority; full pods carry their priority, so sort by it.
      order_.resize(v.uids.size());
      for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
      if (v.pods.size() == v.uids.size()) {
        std::stable_sort(order_.begin(), order_.end(),
                         [&](uint32_t a, uint32_t b) { return v.pods[a].priority > v.pods[b].priority; });
      }
      size_t needed = 0;
      bool fits = false;
      for (size_t k = order_.size(); k-- > 0;) {  // lowest priority first
        ++needed;
        cache::PodCharge charge;
        if (w.podCharge(v.uids[order_[k]], charge) && charge.node == known->id) cache::uncharge(charge, sim);
        if (fitsAfterEviction(sim)) {
          fits = true;
          break;
        }
      }
      if (!fits) return true;
      // Keep the `needed` lowest-priority victims, in decreasing priority.
      keptUids_.clear();
      for (size_t k = order_.size() - needed; k < order_.size(); ++k) keptUids_.push_back(v.uids[order_[k]]);
      v.uids.assign(keptUids_.begin(), keptUids_.end());
      return false;
    });
  }
  const uint64_t decided = uv_hrtime();
  codec::encodePreemptionResult(victims, req.response);
  trace(req, preemptArgs_.pod, {true, t0, parsed, decided, uv_hrtime(), victims.size(), 0, 0});
}

void ExtenderService::enableBinding(Binder* binder) {
  binder_ = binder;
  // Pods deleted before a bind (never schedulable, their job gone) stayed until kRememberedPods
  // newer ones pushed them out: serve's RSS grew from 20 to 48.7 MB in 745 s under loadgen's
  // churn (100 pods/s, about 11/s never bound), ~3.4 KB a pod.
  binder->watchPodDeletions([this](std::vector<std::string> uids) {
    for (const std::string& uid : uids) forget(uid);
  });
}

void ExtenderService::remember(const codec::Pod& pod, bool peerVerified) {
  if (binder_ == nullptr || pod.uid.empty()) return;
  std::string uid(pod.uid);
  auto it = remembered_.find(uid);
  if (it != remembered_.end()) {
    // An unverified filter never replaces what a verified one remembered (the pod's
    // annotations choose its GPUs) when binds need a verified filter.
    if (options_.bindNeedsVerifiedFilter && !peerVerified && it->second.peerVerified) return;
    it->second.pod->assign(pod);  // the pod may have changed since
    it->second.peerVerified = peerVerified;
    return;
  }
  if (remembered_.size() >= kRememberedPods) {
    remembered_.erase(rememberedOrder_.front());
    rememberedOrder_.pop_front();
  }
  rememberedOrder_.push_back(uid);
  remembered_.emplace(std::move(uid),
                      RememberedPod{std::make_unique<OwnedPod>(pod), peerVerified, std::prev(rememberedOrder_.end())});
  rememberedGauge_->set(static_cast<double>(remembered_.size()));
}

void ExtenderService::forget(const std::string& uid) {
  auto it = remembered_.find(uid);
  if (it == remembered_.end()) return;
  rememberedOrder_.erase(it->second.order);
  remembered_.erase(it);
  rememberedGauge_->set(static_cast<double>(remembered_.size()));
}

bool ExtenderService::bind(ExtenderRequest& req, cache::Cache::Writer& w) {
  if (!decoder_.decodeBindingArgs(req.body, bindArgs_)) {
    badRequest(req);
    return true;
  }
  // The namespace and name become path segments of the Binding's URL (and of the Event that
  // reports a failure): refuse what kube-apiserver could not hold before anything is reserved
  // or sent.
  if (std::string invalid; !codec::validatePodRef(bindArgs_.podNamespace, bindArgs_.podName, invalid)) {
    decodeErrors_->inc();
    req.status = 400;
    req.response = "bind: " + invalid + "\n";
    return true;
  }
  // The batch's snapshot predates the reservations of the binds before this one in the batch
  // (kube-scheduler binds from parallel goroutines, so a burst brings several per loop turn):
  // deciding on it handed two pods the same GPU indexes. Decide on the current version, which
  // holds every earlier reservation (each is published before the next bind runs).
  cache::Snapshot current = reader_.acquire();
  std::string error = binder_ == nullptr ? std::string(kNoBinder) : startBind(req, current, w);
  if (error.empty() && binder_ != nullptr) return false;  // answered when kube-apiserver has
  codec::encodeBindingResult(error, req.response);
  return true;
}

void ExtenderService::readPodThenBind(ExtenderRequest& req, const std::string& who) {
  const codec::BindingArgs& a = bindArgs_;
  req.deferred = true;
  binder_->readPod(std::string(a.podNamespace), std::string(a.podName),
                   [this, &req, who, uid = std::string(a.podUid)](std::string error, std::string body) {
                     if (error.empty()) {
                       readPodBytes_.assign(body);
                       codec::Pod pod;
                       if (!decoder_.decodePod(readPodBytes_.view(), pod)) {
                         error = "reading pod " + who + ": " + decoder_.errorMessage();
                       } else if (pod.uid != uid) {
                         error = "pod " + who + " is now UID " + std::string(pod.uid) + ", not " + uid;
                       } else {
                         remember(pod, true);
                       }
                     }
                     if (!error.empty()) {
                       codec::encodeBindingResult(error, req.response);
                       req.complete(&req);
                       return;
                     }
                     // Bind again, now remembered, in turn with the other binds waiting for the writer.
                     podsRead_->inc();
                     writerQueue_.push_back(WriterWork{&req, {}});
                     drainWriterQueue();
                   });
}

std::string ExtenderService::startBind(ExtenderRequest& req, const cache::Snapshot& snap, cache::Cache::Writer& w) {
  const codec::BindingArgs& a = bindArgs_;
  std::string who = std::string(a.podNamespace) + "/" + std::string(a.podName);
  if (options_.bindNeedsVerifiedFilter && !req.peerVerified) {
    return "bind refused for pod " + who + ": the request did not come with a verified client certificate";
  }
  auto it = remembered_.find(std::string(a.podUid));
  if (it == remembered_.end()) {
    // With replicas behind one Service, kube-scheduler's filter may have reached another replica
    // and its bind this one (only the leader binds). A bind that came with a verified client
    // certificate is kube-scheduler's own, so the pod is read from kube-apiserver instead of
    // refused. Without client certificates a bind stays tied to a filter seen here: anyone who
    // reaches the port could otherwise bind any pod whose name and UID they can read.
    if (options_.bindNeedsVerifiedFilter) {
      readPodThenBind(req, who);
      return {};
    }
    return "pod " + who + " was not filtered by fleetsched, so it cannot choose its GPUs; retrying will filter it";
  }
  if (options_.bindNeedsVerifiedFilter && !it->second.peerVerified) {
    return "bind refused for pod " + who + ": no filter with a verified client certificate asked about it";
  }
  const codec::Pod& pod = it->second.pod->pod();
  cache::Reservation r = cache::reserveOnNode(cycle_, config_.profileFor(pod), pod, snap, w, a.node, kReservationTtl);
  if (!r.ok()) return std::move(r.refused);
  const cache::ReserveResult reserved = r.placed.result;

  BindingRequest b;
  b.podNamespace = a.podNamespace;
  b.podName = a.podName;
  b.podUid = a.podUid;
  b.node = a.node;
  b.annotations = cache::bindingAnnotations(r.placed);
  req.deferred = true;
  std::string uid(a.podUid);
  binder_->postBinding(std::move(b), [this, &req, uid, reserved](std::string error) {
    if (error.empty()) {
      forget(uid);  // bound: no bind will ask for it again without a new filter
    } else if (reserved != cache::ReserveResult::AlreadyBound) {
      unreserveLater(uid);
    }
    codec::encodeBindingResult(error, req.response);
    req.complete(&req);
  });
  return {};
}

void ExtenderService::debugPod(std::string_view target, LocalResponse& out) const {
  constexpr std::string_view kPrefix = "/debug/pods/";
  constexpr std::string_view kUsage = "want GET /debug/pods/NAMESPACE/NAME\n";
  if (const size_t q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  if (const size_t at = target.find(kPrefix); at != std::string_view::npos) {
    target.remove_prefix(at + kPrefix.size());  // an absolute-form target keeps its scheme and host first
  } else {
    out.status = 400;
    out.body = kUsage;
    return;
  }
  const size_t slash = target.find('/');
  if (slash == std::string_view::npos) {
    out.status = 400;
    out.body = std::string(kUsage);
    return;
  }
  const std::string_view ns = target.substr(0, slash);
  const std::string_view name = target.substr(slash + 1);
  if (std::string invalid; !codec::validatePodRef(ns, name, invalid)) {
    out.status = 400;
    out.body = "/debug/pods: " + invalid + "; " + std::string(kUsage);
    return;
  }
  if (!decisions_) {
    out.status = 404;
    out.body = "/debug/pods: decisions are not recorded: start serve with --debug-decisions N (N > 0)\n";
    return;
  }
  const DecisionLog::Entry* e = decisions_->find(ns, name);
  if (e == nullptr) {
    out.status = 404;
    out.body = "/debug/pods: no decision recorded for pod " + std::string(ns) + "/" + std::string(name) +
               ": fleetsched keeps the last filter and prioritize of the " + std::to_string(decisions_->capacity()) +
               " pods decided most recently (--debug-decisions)\n";
    return;
  }
  out.contentType = "application/json";
  DecisionLog::render(*e, out.body);
}

void ExtenderService::trace(const ExtenderRequest& req, const codec::Pod& pod, const Evaluator::Outcome& o) {
  parse_->observeNanos(o.parsedNs - o.startNs);
  decide_->observeNanos(o.decidedNs - o.parsedNs);
  encode_->observeNanos(o.encodedNs - o.decidedNs);
  ++requests_;
  if (options_.traceEvery != 0 && requests_ % options_.traceEvery == 0) {
    FLOG_INFO(log::format("trace %s pod=%.*s/%.*s nodes=%zu unknown=%zu parse=%.1fus decide=%.1fus encode=%.1fus "
                          "bytes=%zu",
                          std::string(verbName(req.verb)).c_str(), static_cast<int>(pod.namespace_.size()),
                          pod.namespace_.data(), static_cast<int>(pod.name.size()), pod.name.data(), o.nodes,
                          o.unknownNodes, (o.parsedNs - o.startNs) / 1e3, (o.decidedNs - o.parsedNs) / 1e3,
                          (o.encodedNs - o.decidedNs) / 1e3, req.response.size()));
  }
}

}  // namespace fleetsched::engine
