// Reflector: keeps one resource kind (Nodes or Pods) mirrored from kube-apiserver into a sink.
//
//   start ─▶ streaming list (watch + sendInitialEvents) ──rejected──▶ paged list (limit/continue)
//              │ initial-events-end bookmark                          │ last page
//              ▼                                                      ▼
//            watch from the last resourceVersion (bookmarks advance it) ◀─ normal end: resume
//              │ 410 / ERROR Expired ─▶ relist      other failures ─▶ backoff with jitter, resume
//
// Decoding and applying objects is the sink's job (the reflector sees bytes, lines and the
// few facts the sink reports back), so the state machine is tested with recorded streams and
// the sink with objects. Runs entirely on the transport's loop.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "apiclient/line_splitter.h"
#include "apiclient/transport.h"

namespace fleetsched::apiclient {

struct ListPageInfo {
  bool ok = false;
  std::string error;
  std::string resourceVersion;
  std::string continueToken;
};

struct WatchEventInfo {
  enum class Type : uint8_t { Added, Modified, Deleted, Bookmark, Error, Invalid };
  Type type = Type::Invalid;
  std::string resourceVersion;
  bool initialEventsEnd = false;  // bookmark annotated k8s.io/initial-events-end: "true"
  int32_t code = 0;               // ERROR: Status.code
  std::string reason;             // ERROR: Status.reason; Invalid: what was wrong
  std::string message;
};

class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A full resync begins: objects applied until endRelist are the new truth.
  virtual void beginRelist() = 0;
  // One list page (padded body). Applies its items and reports the list metadata.
  virtual ListPageInfo applyListPage(std::string_view paddedBody) = 0;
  // The resync is complete: objects not seen since beginRelist are gone.
  virtual void endRelist() = 0;
  // The resync failed midway; the next beginRelist starts over.
  virtual void abortRelist() = 0;
  // One watch event line (padded). Applies it and reports what it was.
  virtual WatchEventInfo applyEvent(std::string_view paddedLine) = 0;
  // Called after each network read's events and after each list page: a sink that batches
  // its writes makes them visible here.
  virtual void flush() {}
};

struct ReflectorConfig {
  std::string resource;      // for messages and metrics: "nodes", "pods"
  std::string path;          // "/api/v1/nodes"
  std::string fieldSelector; // URL-encoded; empty for none
  uint32_t pageSize = 500;
  uint32_t minWatchTimeoutSec = 300;  // each watch asks for [min, 2·min) like client-go
  bool streamingList = true;          // try sendInitialEvents first
  uint32_t backoffInitialMs = 500;
  uint32_t backoffMaxMs = 30000;
  uint32_t listTimeoutMs = 60000;
};

struct ReflectorStats {
  std::atomic<uint64_t> relists{0};
  std::atomic<uint64_t> watches{0};      // watch requests started
  std::atomic<uint64_t> failures{0};     // failed exchanges that led to a backoff
  std::atomic<uint64_t> expired{0};      // 410 / Expired seen
  std::atomic<uint64_t> events[4]{};     // added, modified, deleted, bookmark
  std::atomic<uint64_t> lastEventMs{0};  // scheduler clock of the last applied event
  std::atomic<bool> synced{false};       // an initial list has completed
  // Scheduler clock of the first failed exchange since the reflector last had a list complete
  // or a watch answer 200; 0 while it has. How long the cache may have been missing changes.
  std::atomic<uint64_t> failingSinceMs{0};
};

class Reflector {
 public:
  Reflector(ReflectorConfig config, Transport& transport, Scheduler& scheduler, ReflectorSink& sink);
  ~Reflector();

  void start();
  void stop();

  // Lists again from scratch (a consistent read: no resourceVersion) and runs `done` once that
  // list is applied in full (after the sink's endRelist), retries included. Leader election
  // calls it so a new leader knows every Binding its predecessor made before it binds.
  void resync(std::function<void()> done);

  // Called on 401 before the retry, so the owner can re-read a rotated token.
  void setOnUnauthorized(std::function<void()> fn) { onUnauthorized_ = std::move(fn); }

  const ReflectorStats& stats() const { return stats_; }
  const std::string& lastResourceVersion() const { return resourceVersion_; }
  // Watching from lastResourceVersion(): every change up to it has been applied to the sink.
  bool watching() const { return phase_ == Phase::Watching; }
  bool streamingListSupported() const { return streamingList_; }
  const std::string& lastError() const { return lastError_; }

 private:
  enum class Phase : uint8_t { Idle, StreamingList, Listing, Watching, Waiting, Stopped };

  void startSync();
  void startStreamingList();
  void startListPage();
  void startWatch();
  void relist();
  // A list completed and was applied: marks the reflector synced and runs resync()'s waiters.
  void listApplied();
  void fail(const std::string& why, int status);
  void resetExchange();
  std::string watchQuery(bool initialEvents);
  void onWatchLine(std::string_view line);
  // onStatus/onData of a watch stream (plain or streaming list); `onOverflow` runs, outside the
  // stream's callbacks, when an event exceeds the line limit.
  ResponseHandler streamHandler(uint64_t gen, std::function<void()> onOverflow);
  // Stops the current stream and runs `next` from the scheduler.
  void leaveStreamThen(std::function<void()> next);

  ReflectorConfig config_;
  Transport& transport_;
  Scheduler& scheduler_;
  ReflectorSink& sink_;
  std::function<void()> onUnauthorized_;
  std::vector<std::function<void()>> resyncWaiters_;

  Phase phase_ = Phase::Idle;
  Transport::Id exchange_ = 0;
  uint64_t generation_ = 0;  // bumps on every new exchange; stale callbacks compare and return
  int status_ = 0;
  std::string body_;
  std::string continue_;
  std::string resourceVersion_;
  bool inRelist_ = false;
  bool streamingList_;
  bool initialDone_ = false;
  uint32_t backoffMs_;
  std::string lastError_;
  LineSplitter splitter_;
  std::mt19937_64 rng_;
  ReflectorStats stats_;
};

}  // namespace fleetsched::apiclient
