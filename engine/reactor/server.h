// Server: the HTTP/1.1 reactor on a caller-owned libuv loop (timers, signals and cache ingestion
// may share it). One connection = one llhttp parser + a queue of in-order responses. Extender
// requests completed during one loop turn go to BatchHandler::handleBatch in ONE call from a
// uv_check_t; every response of the turn is then written with one corked write per connection.
// Framing and limit errors get 400/408/413/431/503 plus close; verb outcomes are the handler's.
//
//   engine::Metrics metrics;
//   engine::Server server(loop, config, handler, metrics);
//   if (int rc = server.listen(); rc != 0) die(uv_strerror(rc));
//   uv_run(loop, UV_RUN_DEFAULT);  // server.close() from a signal handler ends it
//
// Ownership: handler and metrics are borrowed and must outlive the server. Call everything on the
// loop's thread. The destructor closes what is still open and spins the loop until the handles
// are released.
//
// Deferred requests (ExtenderRequest::deferred, see handler.h) stay valid across close() and the
// close of their connection until the handler calls complete(); the destructor frees those never
// completed. For a clean stop: close(), let the loop run until deferredRequests() == 0 (the
// handler completes or fails its outstanding work), then destroy the server.
//
// Graceful stop (SIGTERM): shutdown() closes the listener and makes /readyz answer 503; idle
// connections get a FIN at once, the others once they have answered what they owe — a request
// still arriving is read and answered, a deferred one waits for complete() — with
// `Connection: close` on the last answer. Run the loop until drained(), or until a deadline, then
// close() cuts what is left (pendingRequests() counts it).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "engine/reactor/handler.h"
#include "engine/reactor/metrics.h"

namespace fleetsched::engine {

class TlsContext;  // engine/reactor/tls.h

constexpr size_t kDefaultMaxHeaderBytes = 64 * 1024;
// A filter request carrying 5,000 full Node objects (nodeCacheCapable: false) is ~60 MiB; the
// extender service's decoder gets the same limit (serve passes it on).
constexpr size_t kDefaultMaxBodyBytes = 64u << 20;
// Request bodies held (being received, or waiting for their answer) plus answers the sockets have
// not taken yet, over all of one server's connections. Beyond it a new body gets 503 and
// connections with unsent answers are not read. 256 MiB: 80 clients that never read held 1.8 GB
// before (issue 26); the manifests allow the container 1 GiB.
constexpr size_t kDefaultMaxBufferedBytes = 256u << 20;
// A connection whose unsent answers shrink by no byte for this long is closed. kube-scheduler
// gives up on an extender call after its httpTimeout (5 s by default).
constexpr uint32_t kDefaultWriteTimeoutMs = 10'000;
constexpr uint32_t kDefaultMaxConnections = 4096;
constexpr uint32_t kDefaultMaxPipelined = 32;
// A new connection that sends nothing is closed after this: 4,096 silent sockets must not hold
// every slot for the idle timeout.
constexpr uint32_t kDefaultFirstByteTimeoutMs = 10'000;
// Connections one client address may hold; kube-scheduler needs a few, binds in parallel more.
constexpr uint32_t kDefaultMaxConnectionsPerClient = 256;
constexpr uint32_t kDefaultHeaderTimeoutMs = 10'000;
constexpr uint32_t kDefaultBodyTimeoutMs = 30'000;
// Longer than Go's 90 s idle-connection timeout, so the client closes idle connections first.
constexpr uint32_t kDefaultIdleTimeoutMs = 120'000;
// After an error response: how long we keep draining input before closing (lingering close).
constexpr uint32_t kDefaultLingerMs = 2'000;

struct ServerConfig {
  std::string host = "127.0.0.1";                      // numeric IPv4/IPv6 or "localhost"
  uint16_t port = 8888;                                // 0 = any free port; see Server::port()
  std::string urlPrefix;                               // verbs are served at {urlPrefix}/filter etc.
  size_t maxHeaderBytes = kDefaultMaxHeaderBytes;      // 431
  size_t maxBodyBytes = kDefaultMaxBodyBytes;          // 413
  // 503 for a body that would take the bytes buffered past it (0: no limit); see above.
  size_t maxBufferedBytes = kDefaultMaxBufferedBytes;
  uint32_t maxConnections = kDefaultMaxConnections;    // 503 and close beyond it
  // Closed at once, without a word, beyond it (0: no limit). Counted per remote IP address.
  uint32_t maxConnectionsPerClient = kDefaultMaxConnectionsPerClient;
  uint32_t maxPipelined = kDefaultMaxPipelined;        // responses owed per connection, deferred included
  // Closed without an answer: accept to the first byte (0: idleTimeoutMs applies instead).
  uint32_t firstByteTimeoutMs = kDefaultFirstByteTimeoutMs;
  uint32_t headerTimeoutMs = kDefaultHeaderTimeoutMs;  // 408: first byte to end of headers
  uint32_t bodyTimeoutMs = kDefaultBodyTimeoutMs;      // 408: end of headers to end of body
  uint32_t idleTimeoutMs = kDefaultIdleTimeoutMs;      // 408 on idle keep-alive
  uint32_t writeTimeoutMs = kDefaultWriteTimeoutMs;    // close: unsent answers not shrinking
  uint32_t lingerMs = kDefaultLingerMs;
  int backlog = 511;
  // SO_REUSEPORT, so several reactors can share the port. Off by default: with it a second
  // process listening on the same port silently takes a share of the connections.
  bool reusePort = false;
  // false: the extender verbs answer 404 here; /healthz, /readyz, /metrics only (a listener for
  // kubelet probes and Prometheus beside a loopback-only verbs listener). Routes added with
  // addGet are served either way.
  bool serveVerbs = true;
  // Added to every server metric series, e.g. {{"reactor", "1"}}: reactors sharing one Metrics
  // registry need distinct labels (a series has one writer thread).
  Labels metricLabels;
  // HTTPS (TlsContext::load): every connection is TLS, plain HTTP gets a 400 and is closed. With
  // a client CA, a handshake without a client certificate that chains to it fails, and each
  // extender request says so in ExtenderRequest::peerVerified. The handshake must finish within
  // headerTimeoutMs of accept. null: plain HTTP.
  std::shared_ptr<const TlsContext> tls;
};

// A GET endpoint registered with Server::addGet (e.g. /debug/...).
struct LocalResponse {
  int status = 200;
  std::string_view contentType = "text/plain; charset=utf-8";  // must outlive the call: a literal
  std::string body;
};
using GetHandler = std::function<void(std::string_view target, LocalResponse& out)>;

class Server {
 public:
  Server(uv_loop_t* loop, ServerConfig config, BatchHandler& handler, Metrics& metrics);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // A TLS listener's context from now on (TlsReloader): connections accepted later handshake with
  // it, open ones keep the one they started with. Loop thread; ignored on a plain listener, which
  // cannot turn into a TLS one.
  void setTls(std::shared_ptr<const TlsContext> tls);
  // Serves GET path (exact; a subtree when it ends in '/'). Call before listen().
  void addGet(std::string path, GetHandler fn);
  // Binds and listens (and ignores SIGPIPE process-wide). Returns 0 or a negative libuv error
  // code (see uv_strerror).
  int listen();
  // The bound port (useful with port 0); 0 before listen().
  uint16_t port() const;
  // Stops accepting and closes every connection; the loop ends once nothing else is active.
  void close();
  // Stops accepting and lets every connection finish the requests it has started; see above.
  void shutdown();
  // After shutdown(): every connection is closed and no deferred request is outstanding.
  bool drained() const;
  // Requests read or being read and not yet answered (deferred ones included), on open
  // connections: what close() would cut now.
  size_t pendingRequests() const;
  // Open client connections (rejected ones excluded). Safe to call from any thread.
  size_t connections() const;
  // Extender requests deferred by the handler and not yet completed, whether or not their
  // connection is still open. Safe to call from any thread.
  size_t deferredRequests() const;
  // Request bodies held plus answers not yet taken by the sockets (ServerConfig::maxBufferedBytes;
  // the gauge fleetsched_http_buffered_bytes). Safe to call from any thread.
  size_t bufferedBytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleetsched::engine
