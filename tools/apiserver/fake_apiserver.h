// FakeApiServer: a minimal kube-apiserver stand-in on loopback (plain HTTP/1.1, keep-alive) for
// measuring the real ingestion path (bench/ingest) and for the load generator's churn mode. It
// runs its own libuv loop on its own thread and serves, for "/api/v1/nodes" and "/api/v1/pods":
//   - lists with limit/continue paging (the continue token is the next item's index), built
//     from prebuilt item bytes without copying them (uv_write over slices);
//   - streaming lists (watch + sendInitialEvents=true): ADDED per item, then the
//     initial-events-end bookmark, then a normal end; or 422 when `streamingList` is off, so the
//     reflector falls back to paged lists (what an apiserver without WatchList answers);
//   - watches: either held open with no events (Hold), or answered with the collection's
//     prebuilt event stream followed by a normal end (Stream), so the reflector re-watches at
//     once and ingestion runs flat out. The arrival time of every plain watch request is
//     recorded: the gap between two on one kind is the time to receive and apply one stream.
//
// Live pods (loadgen --churn), beside the pods collection's fixed items: createPod() adds a
// pending pod, a POSTed Binding (/api/v1/namespaces/NS/pods/NAME/binding) sets its
// spec.nodeName and merges the Binding's annotations, and `podLifetime` after its Binding the pod
// is deleted (as a finished pod would be). Each change takes the next resourceVersion and is a
// watch event (ADDED, MODIFIED, DELETED) sent to every held pod watch; a watch from an older
// resourceVersion first gets the events after it (410 Gone once they left the log of the last
// kEventLogSize), and pod lists and streaming lists end with the live pods. Binding refusals are
// kube-apiserver's: 404 for an unknown pod, 409 for a UID that differs or a pod already bound.
// Events (POST /api/v1/namespaces/NS/events) are accepted and dropped.
//
// Threads: configure collections before start(); setWatchMode(), createPod(), deletePod() and the
// accessors from any thread.
#pragma once

#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fleetsched::tools::apiserver {

using SteadyClock = std::chrono::steady_clock;

// One resource kind's objects as the server sends them.
class Collection {
 public:
  explicit Collection(std::string listKind) : listKind_(std::move(listKind)) {}
  // `object` is one compact JSON object (no TypeMeta, as list items carry none).
  void add(std::string_view object);
  // A watch stream (events as JSON lines, newline-terminated); returns its index.
  size_t addWatchStream(std::string events, size_t count);

  size_t size() const { return ends_.size(); }
  // Items [begin, end) as "a,b,c".
  std::string_view slice(size_t begin, size_t end) const;
  std::string_view item(size_t i) const { return slice(i, i + 1); }
  std::string_view watchStream(size_t i) const { return watches_[i]; }
  size_t watchEvents(size_t i) const { return watchCounts_[i]; }
  const std::string& listKind() const { return listKind_; }
  size_t itemBytes() const { return items_.size(); }

  // Serve only the first n items (memory runs with partial fleets).
  void setServed(size_t n) { served_ = n < size() ? n : size(); }
  size_t served() const { return served_; }

 private:
  std::string listKind_;
  std::string items_;
  std::vector<size_t> starts_, ends_;
  std::vector<std::string> watches_;
  std::vector<size_t> watchCounts_;
  size_t served_ = 0;
};

enum class WatchMode : uint8_t { Hold, Stream };

// What happened to the live pods so far.
struct LivePodStats {
  uint64_t created = 0;
  uint64_t bound = 0;
  uint64_t deleted = 0;
  uint64_t bindingsRefused = 0;  // 404 or 409 answers to a Binding
  uint64_t resourceVersion = 0;  // the last one handed out
  size_t live = 0;               // pods existing now
  size_t liveBound = 0;          // of which bound
};

class FakeApiServer {
 public:
  // Live pod watch events kept for watches that resume from an earlier resourceVersion.
  static constexpr size_t kEventLogSize = 4096;

  FakeApiServer(Collection& nodes, Collection& pods);
  ~FakeApiServer();

  // Binds 127.0.0.1 on `port` (0: a free one) and starts the thread, which first runs
  // `threadInit` (e.g. to lower its own priority). Returns the port, 0 on failure.
  uint16_t start(std::function<void()> threadInit = {}, uint16_t port = 0);
  void stop();

  void setStreamingList(bool on) { streamingList_.store(on); }
  // SO_SNDBUF for responses from now on (0: the kernel's autotuning, up to tcp_wmem's 4 MB). A
  // nonblocking send copies up to the free buffer in one system call, which a kernel without
  // preemption finishes before anything else runs on that CPU; a real apiserver's sends happen
  // on another machine.
  void setSendBuffer(int bytes) { sendBuffer_.store(bytes); }
  // Switching the pods' watch to Stream ends the held watches, so the client re-watches;
  // `stream` picks the pods collection's watch stream.
  void setPodWatchMode(WatchMode mode, size_t stream = 0);

  // Live pods. `object` is a compact v1.Pod without TypeMeta whose metadata starts with its name
  // and has its namespace, uid, a resourceVersion and an annotations map; it is sent as given
  // but for its resourceVersion (and once bound its nodeName and annotations). Takes effect on
  // the server's thread, before any request that arrives after the call returns.
  void createPod(std::string namespace_, std::string name, std::string object);
  // Deletes a live pod now (a pod that gave up), bound or not; no-op when it does not exist.
  void deletePod(std::string namespace_, std::string name);
  // Bound pods are deleted this long after their Binding (0: never). Set before start().
  void setPodLifetime(std::chrono::milliseconds lifetime) { podLifetime_ = lifetime; }
  LivePodStats livePodStats() const;

  // Arrival times of plain (not initial-events) watch requests since the last clear.
  std::vector<SteadyClock::time_point> watchArrivals(bool pods) const;
  void clearArrivals();
  uint64_t requests() const { return requests_.load(); }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> streamingList_{false};
  std::atomic<int> sendBuffer_{0};
  std::atomic<uint64_t> requests_{0};
  std::chrono::milliseconds podLifetime_{0};
};

// A kubeconfig for a client of the server on 127.0.0.1:`port` (plain HTTP, no credentials).
std::string kubeconfig(uint16_t port);

}  // namespace fleetsched::tools::apiserver
