// Ingestor: keeps the cache mirrored from kube-apiserver on a thread of its own, so decoding
// and applying watch events never runs inside a request. It owns a libuv loop, a libcurl
// transport, and two reflectors (nodes; pods that are not Succeeded/Failed) whose sinks decode
// with codec and write to the cache (one publish per list page and per watch event).
//
// The same loop performs the binder's API writes: postBinding() hands a Binding to the
// ingestion thread and reports the outcome back on the reactor's loop. With
// IngestOptions::leaderElection it also runs the LeaderElector (leader_election.h), and binds
// only while holding the Lease and after listing the pods again (bindRefusal()).
//
// The ingestion thread runs at IngestOptions::priority (SCHED_IDLE by default) so requests
// seldom wait for it: on a machine with fewer free cores than busy threads a woken reactor
// preempts ingestion at once (a kernel without preemption first finishes a system call). The price is cache lag when something else keeps every core busy; that lag
// is the fleetsched_watch_lag_seconds gauge.
//
// Threads: construct, start(), stop() and postBinding() on the reactor thread; synced() and
// server() from any thread.
#pragma once

#include <uv.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "apiclient/reflector.h"
#include "cache/cache.h"
#include "engine/ingest/audit.h"
#include "engine/ingest/leader_election.h"
#include "engine/reactor/metrics.h"
#include "engine/service/binder.h"

namespace fleetsched::engine {

// How the ingestion thread competes with the reactor (and everything else) for CPU time.
enum class IngestPriority : uint8_t {
  Idle,    // SCHED_IDLE: runs on time no normal thread wants; any wakeup preempts it
  Low,     // SCHED_BATCH at nice 19: a ~1.5 % share against each normal thread, no wakeup preemption
  Normal,  // the reactor's own policy: they share cores evenly
};

// "idle" | "low" | "normal".
bool parseIngestPriority(std::string_view text, IngestPriority& out);
const char* ingestPriorityName(IngestPriority p);

// CPU list in the kernel's notation ("1", "0,2-3"); empty text is the empty list.
bool parseCpuList(std::string_view text, std::vector<int>& out);

// Gives the calling thread `priority` and, when `cpus` is not empty, that affinity. Lowering a
// thread's priority needs no privilege. Returns false with a one-line error.
bool applyThreadPolicy(IngestPriority priority, const std::vector<int>& cpus, std::string& error);

struct IngestOptions {
  std::string kubeconfig;  // empty with inCluster: the pod's service account
  std::string context;
  bool inCluster = false;
  uint32_t pageSize = 500;
  bool streamingList = true;
  IngestPriority priority = IngestPriority::Idle;
  std::vector<int> cpus;  // the ingestion thread's affinity; empty: inherit the process's
  uint64_t staleAfterMs = 60000;  // fresh() turns false once a watch has failed this long (0: never)
  // serve --leader-elect: bind (and preempt) only while holding this Lease; empty: always.
  std::optional<LeaderElectionConfig> leaderElection;
};

// Whether a reflector's cache is current enough to decide with: it has not been failing (no list
// completed, no watch accepted since its first failed exchange) for staleAfterMs or longer at
// `nowMs` (its scheduler's clock). staleAfterMs 0: always.
bool watchFresh(const apiclient::ReflectorStats& stats, uint64_t nowMs, uint64_t staleAfterMs);

class Ingestor : public Binder {
 public:
  Ingestor(cache::Cache& cache, Metrics& metrics, IngestOptions options);
  ~Ingestor() override;
  Ingestor(const Ingestor&) = delete;
  Ingestor& operator=(const Ingestor&) = delete;

  // Reads the cluster configuration and starts the ingestion thread. `reactor` is the loop
  // postBinding() answers on. Returns false with a one-line error.
  bool start(uv_loop_t* reactor, std::string& error);
  // Stops the thread and closes the reactor-side handle; pending bind callbacks are dropped.
  void stop();

  // Both kinds have completed an initial list.
  bool synced() const { return synced_.load(std::memory_order_acquire); }
  // Neither watch has been failing for IngestOptions::staleAfterMs (checked once a second).
  bool fresh() const { return fresh_.load(std::memory_order_acquire); }
  const std::string& server() const { return server_; }
  // Watch events (added, modified, deleted) applied so far, both kinds; any thread, between
  // start() and stop().
  uint64_t eventsApplied() const;

  // Binder: POSTs the Binding from the ingestion thread; `done(error)` runs on the reactor loop
  // (binder.h).
  void postBinding(BindingRequest req, std::function<void(std::string error)> done) override;
  // Binder: GETs the pod from the ingestion thread; `done` runs on the reactor loop.
  void readPod(std::string podNamespace, std::string podName,
               std::function<void(std::string error, std::string body)> done) override;

  // Binder: runs `fn` on the reactor loop after the ingestion thread has finished what it is
  // doing now (its writes included).
  void afterIngestTurn(std::function<void()> fn) override;

  // Binder: with IngestOptions::leaderElection, empty only while this replica holds the Lease,
  // has listed the pods again since it acquired it (so it knows every GPU index its predecessor
  // handed out) and is not stepping down; otherwise why not ("not the leader; leader is X").
  // Without leader election always empty. Any thread.
  std::string bindRefusal() const override;
  // SIGTERM: refuse new binds and preemptions from now on, but keep the Lease (renewed) until
  // releaseLease(), so no other replica binds while this one's Bindings are in flight.
  void stepDown() { steppingDown_.store(true, std::memory_order_release); }
  // Gives the Lease up (LeaderElector::release) and runs `done` on the reactor loop when that
  // is answered; at once without leader election.
  void releaseLease(std::function<void()> done);

  // Audits the cache against a pod list at the pod watch's resourceVersion, read and compared
  // on the ingestion thread; `done(result, error)` runs on the reactor loop.
  void audit(std::function<void(AuditResult result, std::string error)> done);

  // Binder: hands `fn`, on the reactor loop, the UIDs of pods the pod watch saw deleted.
  void watchPodDeletions(std::function<void(std::vector<std::string> uids)> fn) override;

  struct Loop;

 private:
  struct AuditJob;
  // Requests one page of an audit's pod list (the first when `continueToken` is empty), then the
  // next, and finishes the job after the last page or an error.
  void auditPage(std::shared_ptr<AuditJob> job, std::string continueToken);
  void runOnIngest(std::function<void()> fn);
  void runOnReactor(std::function<void()> fn);

  cache::Cache& cache_;
  Metrics& metrics_;
  IngestOptions options_;
  std::string server_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> fresh_{true};
  // Leader election: holding the Lease and caught up (written on the ingestion thread, which
  // checks it again before each Binding); stepping down after SIGTERM; the holder last seen.
  std::atomic<bool> mayBind_{false};
  std::atomic<bool> steppingDown_{false};
  mutable std::mutex holderMutex_;
  std::string holder_;

  std::unique_ptr<Loop> loop_;  // lives on the ingestion thread
  std::thread thread_;

  uv_async_t* reactorAsync_ = nullptr;
  std::mutex reactorMutex_;
  std::vector<std::function<void()>> reactorQueue_;
  // watchPodDeletions: the reactor's callback (reactor thread only), and whether the ingestion
  // thread should post deletions at all.
  std::function<void(std::vector<std::string>)> podDeletions_;
  std::atomic<bool> forwardPodDeletions_{false};
};

}  // namespace fleetsched::engine
