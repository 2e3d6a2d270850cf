// TlsReloader: the verbs listener's certificate follows its files. Serving certificates rotate —
// cert-manager renews one at two thirds of its life and rewrites the mounted Secret — and a
// process that read its files once serves the old certificate until it expires, then fails every
// handshake. kube-scheduler and kube-apiserver re-read theirs the same way.
//
// Every interval (serve: 60 s) the reloader reads the three PEM files on the loop thread (a few
// KB: no IO thread needed) and compares their bytes with those in use. When they changed and
// build a context, the server gets it (Server::setTls): connections accepted from then on
// handshake with the new certificate and client CA, open ones keep theirs. When they changed and
// do not build — a copy half done, a key from the next pair beside the old certificate — the
// server keeps the context it has, the error is logged once per distinct content, and the next
// tick tries again.
//
// Metrics: fleetsched_tls_reloads_total{result="success"|"failure"} and
// fleetsched_tls_certificate_expiry_timestamp_seconds (the served certificate's notAfter, for an
// alert before it lapses).
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>

#include "engine/reactor/tls.h"

namespace fleetsched::engine {

class Counter;
class Gauge;
class Metrics;
class Server;

class TlsReloader {
 public:
  enum class Result : uint8_t { kUnchanged, kReloaded, kFailed };

  explicit TlsReloader(TlsFiles files);
  ~TlsReloader();
  TlsReloader(const TlsReloader&) = delete;
  TlsReloader& operator=(const TlsReloader&) = delete;

  // The first load, whose context the server starts with: nullptr and `error` as TlsContext::load.
  std::shared_ptr<const TlsContext> load(std::string& error);
  // Checks every `intervalMs` on `loop` and hands `server` each new context; registers the
  // metrics. After load() succeeded.
  void start(uv_loop_t* loop, Server& server, Metrics& metrics, uint64_t intervalMs);
  // Stops the timer (the loop can then end); idempotent.
  void close();
  // One check now (what each tick runs; tests call it directly).
  Result check();
  // The last failure's text; empty after a success.
  const std::string& lastError() const { return lastError_; }

 private:
  void use(std::shared_ptr<const TlsContext> ctx, TlsPem pem);

  TlsFiles files_;
  TlsPem applied_;  // the bytes the current context was built from
  TlsPem failed_;   // the last bytes that did not build, so the same error is logged once
  std::string lastError_;
  Server* server_ = nullptr;
  uv_timer_t* timer_ = nullptr;  // freed in its close callback
  int64_t notAfterUnix_ = 0;
  Counter* reloaded_ = nullptr;  // null until start()
  Counter* failures_ = nullptr;
  Gauge* notAfter_ = nullptr;
};

}  // namespace fleetsched::engine
