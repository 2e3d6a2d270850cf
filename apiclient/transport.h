// The HTTP seam of the API client: what the reflector and the binder need from a transport to
// kube-apiserver. CurlTransport implements it over libcurl on a libuv loop; tests implement it
// with recorded responses, so the list/watch state machine is tested without sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace fleetsched::apiclient {

struct ResponseHandler {
  // The status line has arrived (before any body byte).
  std::function<void(int status)> onStatus;
  // A piece of the body, cut wherever the network cut it.
  std::function<void(std::string_view chunk)> onData;
  // The exchange ended: `error` is empty for a complete response, else why it failed.
  std::function<void(const std::string& error)> onDone;
};

struct Request {
  std::string method = "GET";
  std::string path;  // path and query, e.g. "/api/v1/pods?limit=500"
  std::string body;
  std::string contentType = "application/json";
  // Longest the whole exchange may take; 0 for streams that end on their own (watches).
  uint32_t timeoutMs = 30000;
};

class Transport {
 public:
  using Id = uint64_t;
  virtual ~Transport() = default;
  // Starts an exchange; every callback runs on the transport's loop, onDone exactly once
  // (unless cancelled).
  virtual Id start(Request req, ResponseHandler handler) = 0;
  // Drops an exchange; none of its callbacks runs afterwards.
  virtual void cancel(Id id) = 0;
};

// Deferred work on the owner's loop; tests drive it by hand.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void after(uint32_t delayMs, std::function<void()> fn) = 0;
  virtual uint64_t nowMs() const = 0;
};

}  // namespace fleetsched::apiclient
