// The HTTP seam of the API client: what the reflector and the binder need from a transport to
// kube-apiserver. CurlTransport implements it over libcurl on a libuv loop; tests implement it
// with recorded responses, so the list/watch state machine is tested without sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

// Runs `req` and hands `done` the whole response once it has ended (status 0 when none came).
inline Transport::Id fetch(Transport& transport, Request req,
                           std::function<void(int status, std::string& body, const std::string& error)> done) {
  struct State {
    int status = 0;
    std::string body;
  };
  auto st = std::make_shared<State>();
  ResponseHandler h;
  h.onStatus = [st](int s) { st->status = s; };
  h.onData = [st](std::string_view c) { st->body.append(c); };
  h.onDone = [st, done = std::move(done)](const std::string& err) { done(st->status, st->body, err); };
  return transport.start(std::move(req), std::move(h));
}

// The message of a metav1.Status body, or the body's first 200 bytes when it is not one.
inline std::string statusMessage(const std::string& body) {
  auto k = body.find("\"message\":\"");
  if (k == std::string::npos) return body.substr(0, 200);
  k += 11;
  std::string out;
  for (size_t i = k; i < body.size() && body[i] != '"'; ++i) {
    if (body[i] == '\\' && i + 1 < body.size()) ++i;
    out.push_back(body[i]);
  }
  return out;
}

// Deferred work on the owner's loop; tests drive it by hand.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void after(uint32_t delayMs, std::function<void()> fn) = 0;
  virtual uint64_t nowMs() const = 0;
};

}  // namespace fleetsched::apiclient
