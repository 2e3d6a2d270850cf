// FakeApiServer: a minimal kube-apiserver stand-in on loopback (plain HTTP/1.1, keep-alive) for
// measuring the real ingestion path. It runs its own libuv loop on its own thread and serves,
// for "/api/v1/nodes" and "/api/v1/pods":
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
// Threads: configure collections before start(); setWatchMode() and the accessors from any thread.
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

class FakeApiServer {
 public:
  FakeApiServer(Collection& nodes, Collection& pods);
  ~FakeApiServer();

  // Binds 127.0.0.1 on a free port and starts the thread, which first runs `threadInit` (e.g.
  // to lower its own priority). Returns the port, 0 on failure.
  uint16_t start(std::function<void()> threadInit = {});
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
};

}  // namespace fleetsched::tools::apiserver
