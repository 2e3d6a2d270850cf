#include "engine/ingest/ingest.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <future>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "apiclient/api_paths.h"
#include "apiclient/curl_transport.h"
#include "apiclient/kube_config.h"
#include "apiclient/reflector.h"
#include "cache/file_source.h"
#include "codec/decoder.h"
#include "codec/json_writer.h"
#include "codec/k8s_names.h"
#include "engine/ingest/cache_sink.h"
#include "log/log.h"

namespace fleetsched::engine {
namespace {

using apiclient::fetch;
using apiclient::statusMessage;

constexpr uint64_t kStatsIntervalMs = 1000;
constexpr uint64_t kTokenReloadMs = 60'000;
constexpr uint64_t kForcedRefreshMs = 10'000;
constexpr uint32_t kBindTimeoutMs = 10'000;
// Pods per page of an audit list.
constexpr uint32_t kAuditPageSize = 500;
// Pods that hold nothing are not worth a watch event each.
constexpr std::string_view kActivePods = "status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";

// Timers on the ingestion loop for the reflectors' backoff and deferred work.
class UvScheduler final : public apiclient::Scheduler {
 public:
  explicit UvScheduler(uv_loop_t* loop) : loop_(loop) {}
  ~UvScheduler() override { closeAll(); }

  void after(uint32_t delayMs, std::function<void()> fn) override {
    auto* t = new Timer{{}, std::move(fn), this};
    uv_timer_init(loop_, &t->timer);
    t->timer.data = t;
    live_.insert(t);
    uv_timer_start(
        &t->timer,
        [](uv_timer_t* h) {
          auto* t = static_cast<Timer*>(h->data);
          std::function<void()> fn = std::move(t->fn);
          t->owner->release(t);
          fn();
        },
        delayMs, 0);
  }
  uint64_t nowMs() const override { return uv_now(loop_); }

  void closeAll() {
    std::unordered_set<Timer*> live;
    live.swap(live_);
    for (Timer* t : live) close(t);
  }

 private:
  struct Timer {
    uv_timer_t timer;
    std::function<void()> fn;
    UvScheduler* owner;
  };
  void release(Timer* t) {
    live_.erase(t);
    close(t);
  }
  static void close(Timer* t) {
    uv_close(reinterpret_cast<uv_handle_t*>(&t->timer), [](uv_handle_t* h) { delete static_cast<Timer*>(h->data); });
  }

  uv_loop_t* loop_;
  std::unordered_set<Timer*> live_;
};

std::string rfc3339Now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

bool watchFresh(const apiclient::ReflectorStats& stats, uint64_t nowMs, uint64_t staleAfterMs) {
  const uint64_t since = stats.failingSinceMs.load(std::memory_order_relaxed);
  return staleAfterMs == 0 || since == 0 || nowMs < since + staleAfterMs;
}

bool parseIngestPriority(std::string_view text, IngestPriority& out) {
  if (text == "idle") {
    out = IngestPriority::Idle;
  } else if (text == "low") {
    out = IngestPriority::Low;
  } else if (text == "normal") {
    out = IngestPriority::Normal;
  } else {
    return false;
  }
  return true;
}

const char* ingestPriorityName(IngestPriority p) {
  switch (p) {
    case IngestPriority::Idle:
      return "idle";
    case IngestPriority::Low:
      return "low";
    case IngestPriority::Normal:
      return "normal";
  }
  return "?";
}

bool parseCpuList(std::string_view text, std::vector<int>& out) {
  out.clear();
  auto number = [](std::string_view s, int& v) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size() && v >= 0 && v < CPU_SETSIZE;
  };
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return false;  // "1,"
    size_t dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash == std::string_view::npos) {
      if (!number(item, lo)) return false;
      hi = lo;
    } else if (!number(item.substr(0, dash), lo) || !number(item.substr(dash + 1), hi) || hi < lo) {
      return false;
    }
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  return true;
}

bool applyThreadPolicy(IngestPriority priority, const std::vector<int>& cpus, std::string& error) {
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0) {
      error = std::string("cannot pin the ingestion thread to the CPUs given: ") + std::strerror(rc);
      return false;
    }
  }
  sched_param param{};
  param.sched_priority = 0;
  switch (priority) {
    case IngestPriority::Normal:
      return true;
    case IngestPriority::Idle:
      if (int rc = pthread_setschedparam(pthread_self(), SCHED_IDLE, &param); rc != 0) {
        error = std::string("cannot run the ingestion thread at SCHED_IDLE: ") + std::strerror(rc);
        return false;
      }
      return true;
    case IngestPriority::Low:
      if (int rc = pthread_setschedparam(pthread_self(), SCHED_BATCH, &param); rc != 0) {
        error = std::string("cannot run the ingestion thread at SCHED_BATCH: ") + std::strerror(rc);
        return false;
      }
      // On Linux the nice value belongs to the thread (setpriority on a tid).
      if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19) != 0) {
        error = std::string("cannot nice the ingestion thread: ") + std::strerror(errno);
        return false;
      }
      return true;
  }
  return true;
}

// The loop is a base so it is initialised before the members that register handles on it.
struct UvLoop {
  UvLoop() { uv_loop_init(&loop); }
  uv_loop_t loop{};
};

struct Ingestor::Loop : UvLoop {
  Loop(Ingestor& owner, apiclient::ClusterConfig config)
      : owner(owner),
        transport(&loop, std::move(config)),
        scheduler(&loop),
        nodeSink(owner.cache_, codec::ObjectKind::Node),
        podSink(owner.cache_, codec::ObjectKind::Pod),
        nodes(reflectorConfig("nodes", "/api/v1/nodes", "", owner.options_), transport, scheduler, nodeSink),
        pods(reflectorConfig("pods", "/api/v1/pods", std::string(kActivePods), owner.options_), transport, scheduler,
             podSink) {
    // A 401 on a list or watch: the token may have expired or rotated early.
    nodes.setOnUnauthorized([this] { refreshCredentials(true); });
    pods.setOnUnauthorized([this] { refreshCredentials(true); });
  }

  // Token file re-read, exec plugin re-run when due (see apiclient::refreshCredentials); after a
  // 401 (`force`) at most once per kForcedRefreshMs, so a server that refuses every token does
  // not have the plugin run on every retry of every stream.
  void refreshCredentials(bool force) {
    const uint64_t now = uv_now(&loop);
    if (force) {
      if (lastForcedMs != 0 && now - lastForcedMs < kForcedRefreshMs) return;
      lastForcedMs = now;
    }
    std::string err;
    if (!transport.refreshCredentials(static_cast<int64_t>(std::time(nullptr)), force, err)) {
      FLOG_ERROR(err);
    }
  }

  static apiclient::ReflectorConfig reflectorConfig(std::string resource, std::string path, std::string selector,
                                                    const IngestOptions& o) {
    apiclient::ReflectorConfig c;
    c.resource = std::move(resource);
    c.path = std::move(path);
    c.fieldSelector = std::move(selector);
    c.pageSize = o.pageSize;
    c.streamingList = o.streamingList;
    return c;
  }

  struct Gauges {
    Gauge* lag;
    Counter* relists;
    Counter* expired;
    Counter* failures;
    std::array<Counter*, 4> events;
    uint64_t seenRelists = 0, seenExpired = 0, seenFailures = 0;
    std::array<uint64_t, 4> seenEvents{};
  };

  void registerMetrics(Metrics& m) {
    auto make = [&m](const char* resource) {
      Gauges g{};
      g.lag = &m.gauge("watch_lag_seconds", "Seconds since the last watch event or bookmark", {{"resource", resource}});
      g.relists = &m.counter("relists_total", "Full resyncs (initial list included)", {{"resource", resource}});
      g.expired = &m.counter("watch_expired_total",
                             "410 Gone / Expired answers to a list or watch, each followed by a relist",
                             {{"resource", resource}});
      g.failures = &m.counter("watch_failures_total", "Failed list/watch exchanges (each retried with backoff)",
                              {{"resource", resource}});
      const char* types[4] = {"added", "modified", "deleted", "bookmark"};
      for (int i = 0; i < 4; ++i) {
        g.events[i] = &m.counter("watch_events_total", "Watch events applied", {{"resource", resource}, {"type", types[i]}});
      }
      return g;
    };
    nodeGauges = make("nodes");
    podGauges = make("pods");
  }

  void updateMetrics() {
    auto update = [this](const apiclient::ReflectorStats& s, Gauges& g) {
      uint64_t last = s.lastEventMs.load(std::memory_order_relaxed);
      g.lag->set(last == 0 ? 0.0 : static_cast<double>(uv_now(&loop) - last) / 1000.0);
      uint64_t r = s.relists.load(std::memory_order_relaxed);
      g.relists->inc(r - g.seenRelists);
      g.seenRelists = r;
      uint64_t x = s.expired.load(std::memory_order_relaxed);
      g.expired->inc(x - g.seenExpired);
      g.seenExpired = x;
      uint64_t f = s.failures.load(std::memory_order_relaxed);
      g.failures->inc(f - g.seenFailures);
      g.seenFailures = f;
      for (int i = 0; i < 4; ++i) {
        uint64_t e = s.events[i].load(std::memory_order_relaxed);
        g.events[i]->inc(e - g.seenEvents[i]);
        g.seenEvents[i] = e;
      }
    };
    update(nodes.stats(), nodeGauges);
    update(pods.stats(), podGauges);
    bool synced = nodes.stats().synced.load(std::memory_order_acquire) &&
                  pods.stats().synced.load(std::memory_order_acquire);
    if (synced && !owner.synced_.load(std::memory_order_relaxed)) {
      const cache::CacheStats st = owner.cache_.stats();
      FLOG_INFO(log::format("initial sync done: %llu nodes, %llu pods", static_cast<unsigned long long>(st.nodes),
                            static_cast<unsigned long long>(st.boundPods)));
    }
    owner.synced_.store(synced, std::memory_order_release);
    const uint64_t now = scheduler.nowMs();
    const bool fresh = watchFresh(nodes.stats(), now, owner.options_.staleAfterMs) &&
                       watchFresh(pods.stats(), now, owner.options_.staleAfterMs);
    if (fresh != owner.fresh_.load(std::memory_order_relaxed)) {
      if (fresh) {
        FLOG_INFO("watches recovered; ready again");
      } else {
        FLOG_WARNING("a watch has been failing for --stale-after: not ready until it recovers");
      }
    }
    owner.fresh_.store(fresh, std::memory_order_release);
    sinceTokenReload += kStatsIntervalMs;
    if (sinceTokenReload >= kTokenReloadMs) {
      sinceTokenReload = 0;
      refreshCredentials(false);
    }
  }

  // Leader election (IngestOptions::leaderElection): the Lease is acquired; list the pods again
  // before binding, so a GPU index the previous leader handed out is known here first.
  void startedLeading() {
    leaderGauge->set(1);
    const uint64_t t0 = uv_now(&loop);
    const uint64_t term = ++leaderTerm;
    FLOG_INFO("leader election: listing pods again before binding");
    // From a timer: the resync cancels the pod watch, not from inside another exchange's callback.
    scheduler.after(0, [this, t0, term] {
      pods.resync([this, t0, term] {
        if (term != leaderTerm || !elector->leading()) return;
        owner.mayBind_.store(true, std::memory_order_release);
        FLOG_INFO(log::format("leader election: caught up with the API server in %llu ms; binding",
                              static_cast<unsigned long long>(uv_now(&loop) - t0)));
      });
    });
  }
  void stoppedLeading() {
    ++leaderTerm;
    owner.mayBind_.store(false, std::memory_order_release);
    leaderGauge->set(0);
  }
  void holderChanged(const std::string& holder) {
    {
      std::lock_guard<std::mutex> lock(owner.holderMutex_);
      owner.holder_ = holder;
    }
    FLOG_INFO(log::format("leader election: the Lease is held by %s", holder.empty() ? "nobody" : holder.c_str()));
  }

  Ingestor& owner;
  uv_async_t async{};
  uv_timer_t stats{};
  std::mutex mutex;
  std::vector<std::function<void()>> queue;
  apiclient::CurlTransport transport;
  UvScheduler scheduler;
  CacheSink nodeSink;
  CacheSink podSink;
  apiclient::Reflector nodes;
  apiclient::Reflector pods;
  Gauges nodeGauges{};
  Gauges podGauges{};
  cache::Reader reader{owner.cache_};
  codec::Decoder auditDecoder{cache::kMaxClusterFileBytes};
  uint64_t sinceTokenReload = 0;
  uint64_t lastForcedMs = 0;
  std::unique_ptr<LeaderElector> elector;  // with IngestOptions::leaderElection
  Gauge* leaderGauge = nullptr;
  uint64_t leaderTerm = 0;  // bumps per acquisition and loss: a stale resync does not enable binds
};

Ingestor::Ingestor(cache::Cache& cache, Metrics& metrics, IngestOptions options)
    : cache_(cache), metrics_(metrics), options_(std::move(options)) {}

Ingestor::~Ingestor() { stop(); }

bool Ingestor::start(uv_loop_t* reactor, std::string& error) {
  apiclient::ClusterConfig config;
  bool ok = options_.inCluster ? apiclient::inClusterConfig(config, error)
                               : apiclient::loadKubeconfig(options_.kubeconfig, options_.context, config, error);
  if (!ok) return false;
  server_ = config.server;
  if (std::string warning = apiclient::plaintextTokenWarning(config); !warning.empty()) {
    FLOG_WARNING(warning);
  }

  reactorAsync_ = new uv_async_t;
  reactorAsync_->data = this;
  uv_async_init(reactor, reactorAsync_, [](uv_async_t* h) {
    auto* self = static_cast<Ingestor*>(h->data);
    std::vector<std::function<void()>> work;
    {
      std::lock_guard<std::mutex> lock(self->reactorMutex_);
      work.swap(self->reactorQueue_);
    }
    for (auto& fn : work) fn();
  });

  // The loop's handles are created here, before the thread runs it; from then on only the
  // ingestion thread touches them (uv_async_send is the one thread-safe entry).
  loop_ = std::make_unique<Loop>(*this, std::move(config));
  Loop* l = loop_.get();
  l->registerMetrics(metrics_);
  l->async.data = l;
  uv_async_init(&l->loop, &l->async, [](uv_async_t* h) {
    auto* l = static_cast<Loop*>(h->data);
    std::vector<std::function<void()>> work;
    {
      std::lock_guard<std::mutex> lock(l->mutex);
      work.swap(l->queue);
    }
    for (auto& fn : work) fn();
  });
  uv_timer_init(&l->loop, &l->stats);
  l->stats.data = l;
  uv_timer_start(
      &l->stats, [](uv_timer_t* t) { static_cast<Loop*>(t->data)->updateMetrics(); }, kStatsIntervalMs,
      kStatsIntervalMs);
  l->podSink.onPodsDeleted([this](std::vector<std::string> uids) {
    if (!forwardPodDeletions_.load(std::memory_order_acquire)) return;
    runOnReactor([this, uids = std::move(uids)]() mutable {
      if (podDeletions_) podDeletions_(std::move(uids));
    });
  });
  l->nodes.start();
  l->pods.start();
  if (options_.leaderElection) {
    l->leaderGauge = &metrics_.gauge("leader", "1 while this replica holds the leader election Lease (serve --leader-elect)");
    LeaderElector::Callbacks cb;
    cb.startedLeading = [l] { l->startedLeading(); };
    cb.stoppedLeading = [l] { l->stoppedLeading(); };
    cb.holderChanged = [l](const std::string& holder) { l->holderChanged(holder); };
    l->elector = std::make_unique<LeaderElector>(*options_.leaderElection, l->transport, l->scheduler, std::move(cb));
    l->elector->start();
  }
  // The thread sets its own policy (per-thread on Linux, inherited by any thread it starts)
  // before its loop runs; a refusal is a startup error, not a silent fallback. The loop runs
  // either way so stop() can close what the reflectors opened.
  std::promise<std::string> policy;
  std::future<std::string> policyDone = policy.get_future();
  thread_ = std::thread([l, policy = std::move(policy), priority = options_.priority, cpus = options_.cpus]() mutable {
    std::string err;
    applyThreadPolicy(priority, cpus, err);
    policy.set_value(std::move(err));
    uv_run(&l->loop, UV_RUN_DEFAULT);
  });
  error = policyDone.get();
  if (!error.empty()) {
    stop();
    return false;
  }
  return true;
}

void Ingestor::stop() {
  if (!loop_) return;
  Loop* l = loop_.get();
  runOnIngest([l] {
    if (l->elector) l->elector->stop();
    l->nodes.stop();
    l->pods.stop();
    l->transport.close();
    l->scheduler.closeAll();
    uv_timer_stop(&l->stats);
    uv_close(reinterpret_cast<uv_handle_t*>(&l->stats), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&l->async), nullptr);
  });
  if (thread_.joinable()) thread_.join();
  uv_loop_close(&l->loop);
  loop_.reset();
  if (reactorAsync_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(reactorAsync_), [](uv_handle_t* h) { delete reinterpret_cast<uv_async_t*>(h); });
    reactorAsync_ = nullptr;
  }
}

uint64_t Ingestor::eventsApplied() const {
  if (!loop_) return 0;
  uint64_t n = 0;
  for (const apiclient::Reflector* r : {&loop_->nodes, &loop_->pods}) {
    for (int i = 0; i < 3; ++i) n += r->stats().events[i].load(std::memory_order_relaxed);
  }
  return n;
}

void Ingestor::runOnIngest(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(loop_->mutex);
    loop_->queue.push_back(std::move(fn));
  }
  uv_async_send(&loop_->async);
}

void Ingestor::runOnReactor(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(reactorMutex_);
    reactorQueue_.push_back(std::move(fn));
  }
  uv_async_send(reactorAsync_);
}

void Ingestor::watchPodDeletions(std::function<void(std::vector<std::string>)> fn) {
  podDeletions_ = std::move(fn);
  forwardPodDeletions_.store(true, std::memory_order_release);
}

void Ingestor::afterIngestTurn(std::function<void()> fn) {
  runOnIngest([this, fn = std::move(fn)]() mutable { runOnReactor(std::move(fn)); });
}

std::string Ingestor::bindRefusal() const {
  if (!options_.leaderElection) return {};
  if (steppingDown_.load(std::memory_order_acquire)) {
    return "not the leader: this replica is shutting down and hands the leader election Lease over";
  }
  if (mayBind_.load(std::memory_order_acquire)) return {};
  std::string holder;
  {
    std::lock_guard<std::mutex> lock(holderMutex_);
    holder = holder_;
  }
  if (holder.empty()) return "not the leader; no leader elected yet";
  if (holder == options_.leaderElection->identity) {
    return "not the leader yet: this replica holds the Lease but has not caught up with the API server";
  }
  return "not the leader; leader is " + holder;
}

void Ingestor::releaseLease(std::function<void()> done) {
  if (!loop_ || !options_.leaderElection) {
    done();
    return;
  }
  Loop* l = loop_.get();
  runOnIngest([this, l, done = std::move(done)] {
    l->elector->release([this, done] { runOnReactor(done); });
  });
}

void Ingestor::postBinding(BindingRequest req, std::function<void(std::string error)> done) {
  // The names become URL path segments: a name kube-apiserver would refuse is refused here,
  // before any request (and no Event is posted into a namespace the caller made up).
  if (std::string invalid; !codec::validatePodRef(req.podNamespace, req.podName, invalid)) {
    runOnReactor([done = std::move(done), error = "binding: " + invalid] { done(error); });
    return;
  }
  std::string body;
  {
    codec::JsonWriter w(body);
    w.raw(R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":)");
    w.string(req.podName);
    w.raw(R"(,"namespace":)");
    w.string(req.podNamespace);
    w.raw(R"(,"uid":)");
    w.string(req.podUid);
    w.raw(R"(,"annotations":{)");
    for (size_t i = 0; i < req.annotations.size(); ++i) {
      if (i) w.ch(',');
      w.string(req.annotations[i].first);
      w.ch(':');
      w.string(req.annotations[i].second);
    }
    w.raw(R"(}},"target":{"apiVersion":"v1","kind":"Node","name":)");
    w.string(req.node);
    w.raw("}}");
  }
  Loop* l = loop_.get();
  auto shared = std::make_shared<BindingRequest>(std::move(req));
  runOnIngest([this, l, shared, body = std::move(body), done = std::move(done)]() mutable {
    // The reactor checked bindRefusal(); the Lease may have been lost since. Checked here, on
    // the thread that runs the election, no Binding leaves after leadership ended: on a fresh
    // clock, since this thread may have been starved past the renew deadline (SCHED_IDLE) and
    // run this before the timer that would have noticed.
    if (l->elector) uv_update_time(&l->loop);
    if (l->elector && (!l->elector->checkDeadline() || !mayBind_.load(std::memory_order_acquire))) {
      runOnReactor([done, error = "binding " + shared->podNamespace + "/" + shared->podName +
                                  ": not the leader any more (leader election Lease lost)"] { done(error); });
      return;
    }
    apiclient::Request r;
    r.method = "POST";
    r.path = apiclient::podBindingPath(shared->podNamespace, shared->podName);
    r.body = std::move(body);
    r.timeoutMs = kBindTimeoutMs;
    fetch(l->transport, std::move(r), [this, l, shared, done](int status, std::string& body, const std::string& err) {
      std::string error;
      if (!err.empty()) {
        error = "binding " + shared->podNamespace + "/" + shared->podName + ": " + err;
      } else if (status == 200 || status == 201) {
        error.clear();
      } else if (status == 409 &&
                 body.find("already assigned to node \\\"" + shared->node + "\\\"") != std::string::npos) {
        error.clear();  // an earlier attempt of ours went through
      } else {
        if (status == 401) l->refreshCredentials(true);
        error = "binding " + shared->podNamespace + "/" + shared->podName + " to " + shared->node + ": HTTP " +
                std::to_string(status) + ": " + statusMessage(body);
      }
      if (!error.empty()) {
        // Tell the user on the pod, as kube-scheduler's own binder does.
        std::string ev;
        {
          codec::JsonWriter w(ev);
          w.raw(R"({"apiVersion":"v1","kind":"Event","metadata":{"generateName":)");
          w.string(shared->podName + ".");
          w.raw(R"(,"namespace":)");
          w.string(shared->podNamespace);
          w.raw(R"(},"involvedObject":{"apiVersion":"v1","kind":"Pod","name":)");
          w.string(shared->podName);
          w.raw(R"(,"namespace":)");
          w.string(shared->podNamespace);
          w.raw(R"(,"uid":)");
          w.string(shared->podUid);
          w.raw(R"(},"reason":"FailedBinding","type":"Warning","message":)");
          w.string(error);
          w.raw(R"(,"source":{"component":"fleetsched"},"count":1,"firstTimestamp":)");
          w.string(rfc3339Now());
          w.raw(R"(,"lastTimestamp":)");
          w.string(rfc3339Now());
          w.ch('}');
        }
        apiclient::Request er;
        er.method = "POST";
        er.path = apiclient::eventsPath(shared->podNamespace);
        er.body = std::move(ev);
        l->transport.start(std::move(er), apiclient::ResponseHandler{});
      }
      runOnReactor([done, error] { done(error); });
    });
  });
}

void Ingestor::readPod(std::string podNamespace, std::string podName,
                       std::function<void(std::string error, std::string body)> done) {
  Loop* l = loop_.get();
  runOnIngest([this, l, podNamespace = std::move(podNamespace), podName = std::move(podName),
               done = std::move(done)]() mutable {
    apiclient::Request r;
    r.method = "GET";
    r.path = apiclient::podPath(podNamespace, podName);
    r.timeoutMs = kBindTimeoutMs;
    fetch(l->transport, std::move(r),
          [this, l, who = podNamespace + "/" + podName, done](int status, std::string& body, const std::string& err) {
            std::string error;
            if (!err.empty()) {
              error = "reading pod " + who + ": " + err;
            } else if (status != 200) {
              if (status == 401) l->refreshCredentials(true);
              error = "reading pod " + who + ": HTTP " + std::to_string(status) + ": " + statusMessage(body);
            }
            runOnReactor([done, error, body = error.empty() ? std::move(body) : std::string()]() mutable {
              done(error, std::move(body));
            });
          });
  });
}

struct Ingestor::AuditJob {
  AuditLedger ledger;
  std::optional<PodListTally> tally;
  std::string resourceVersion;
  std::function<void(AuditResult, std::string)> done;
};

void Ingestor::audit(std::function<void(AuditResult, std::string)> done) {
  Loop* l = loop_.get();
  runOnIngest([this, l, done = std::move(done)]() mutable {
    // Runs between watch chunks, so the published snapshot holds exactly the pod events up to
    // the watch's resourceVersion: list the pods at that one (kube-apiserver serves it from its
    // watch cache or etcd) and both sides describe the same moment.
    if (!l->pods.watching() || l->pods.lastResourceVersion().empty()) {
      runOnReactor([done] { done({}, "the pod watch is not running; audit skipped"); });
      return;
    }
    auto job = std::make_shared<AuditJob>();
    job->resourceVersion = l->pods.lastResourceVersion();
    {
      cache::Snapshot snap = l->reader.acquire();
      job->ledger = captureLedger(snap, cache_);
    }
    job->tally.emplace(job->ledger);
    job->done = std::move(done);
    auditPage(std::move(job), std::string());
  });
}

void Ingestor::auditPage(std::shared_ptr<AuditJob> job, std::string continueToken) {
  // Pages of kAuditPageSize pods keep each request, and the memory on both sides, bounded.
  Loop* l = loop_.get();
  apiclient::Request r;
  r.path = "/api/v1/pods?fieldSelector=" + std::string(kActivePods) + "&limit=" + std::to_string(kAuditPageSize);
  if (continueToken.empty()) {
    r.path += "&resourceVersion=" + apiclient::escapeQueryValue(job->resourceVersion) + "&resourceVersionMatch=Exact";
  } else {
    r.path += "&continue=" + apiclient::escapeQueryValue(continueToken);
  }
  r.timeoutMs = 60'000;
  fetch(l->transport, std::move(r), [this, l, job](int status, std::string& body, const std::string& err) {
    std::string error = err;
    if (error.empty() && status != 200) {
      error = "pod list at resourceVersion " + job->resourceVersion + " answered HTTP " + std::to_string(status) +
              ": " + statusMessage(body);
    }
    std::string next;
    if (error.empty()) {
      size_t n = body.size();
      body.append(codec::kDecodePadding, '\0');
      job->tally->addPage(std::string_view(body.data(), n), l->auditDecoder, next, error);
    }
    if (error.empty() && !next.empty()) {
      auditPage(job, std::move(next));
      return;
    }
    AuditResult result;
    if (error.empty()) auditReport(job->ledger, &*job->tally, result);
    runOnReactor([job, result = std::move(result), error = std::move(error)]() mutable {
      job->done(std::move(result), error);
    });
  });
}

}  // namespace fleetsched::engine
