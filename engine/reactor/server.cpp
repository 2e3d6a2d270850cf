#include "engine/reactor/server.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <csignal>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/reactor/server_internal.h"

namespace fleetsched::engine {

// Server::Impl: metrics registration, the listener, accepting and closing connections, timeouts
// and graceful stop. A connection's requests and responses are handled in server_io.cpp.

Server::Impl::Impl(uv_loop_t* l, ServerConfig c, BatchHandler& h, Metrics& m)
    : loop(l), config(std::move(c)), handler(h), metrics(m), router(config.urlPrefix) {
  if (config.maxPipelined == 0) config.maxPipelined = 1;
  if (config.maxPipelined > kMaxPipelinedCap) config.maxPipelined = kMaxPipelinedCap;
  // Every series carries config.metricLabels, so reactors sharing a registry never write the
  // same series from two threads.
  auto with = [&](std::string_view key, std::string_view value) {
    Labels l;
    if (!key.empty()) l.emplace_back(key, value);
    l.insert(l.end(), config.metricLabels.begin(), config.metricLabels.end());
    return l;
  };
  for (size_t i = 0; i < kRouteCount; ++i)
    requests[i] = &m.counter("http_requests_total", "HTTP requests by route", with("verb", kRouteNames[i]));
  for (size_t i = 0; i < kVerbCount; ++i)
    latency[i] = &m.histogram("http_request_duration_seconds",
                              "Extender verb latency: first byte read to response queued",
                              with("verb", kRouteNames[i]));
  for (size_t i = 0; i < kErrorKindCount; ++i) {
    if (i >= kTlsHandshake && !config.tls) continue;  // never counted on a plain listener
    errors[i] = &m.counter("http_errors_total", "HTTP framing, limit and transport errors by kind",
                           with("kind", kErrorNames[i]));
  }
  if (config.tls) tlsPlain.reset(new char[kTlsPlainBytes]);
  readPhase = &m.histogram("http_read_seconds", "Time framing one read (parse + route)", with("", ""));
  writePhase =
      &m.histogram("http_write_seconds", "Time serialising and writing one turn's responses", with("", ""));
  batchPhase =
      &m.histogram("http_batch_seconds", "Time in BatchHandler::handleBatch per batch", with("", ""));
  batches = &m.counter("http_batches_total", "Batches handed to the handler", with("", ""));
  batchedRequests =
      &m.counter("http_batched_requests_total", "Extender requests handed over in batches", with("", ""));
  bytesIn = &m.counter("http_received_bytes_total", "Bytes read from clients", with("", ""));
  bodyCopied = &m.counter("http_body_copied_bytes_total",
                          "Request body bytes copied out of the shared read buffer (the rest are read in place)",
                          with("", ""));
  bytesOut = &m.counter("http_sent_bytes_total", "Bytes of responses queued to clients", with("", ""));
  queuedCopies = &m.counter("http_write_copied_bytes_total",
                            "Response bytes the socket did not take at once, copied to be queued (status lines, "
                            "headers, TLS records; answers are queued where they are)",
                            with("", ""));
  accepted = &m.counter("http_connections_accepted_total", "Connections accepted", with("", ""));
  open = &m.gauge("http_connections", "Open client connections", with("", ""));
  deferredGauge = &m.gauge("http_deferred_requests",
                           "Extender requests deferred by the handler and not yet completed", with("", ""));
  bufferedGauge = &m.gauge("http_buffered_bytes",
                           "Request bodies held plus answers not yet taken by the sockets (--max-buffered-bytes)",
                           with("", ""));
}

// ---- connection lifecycle ----

void Server::Impl::onConnection(uv_stream_t* s, int status) {
  auto* self = static_cast<Impl*>(s->data);
  if (status < 0) return;
  self->accept();
}

void Server::Impl::accept() {
  auto* c = new Connection(limits());
  c->server = this;
  uv_tcp_init(loop, &c->tcp);
  c->tcp.data = c;
  c->openHandles = 1;
  bool refuse =
      uv_accept(reinterpret_cast<uv_stream_t*>(&listener), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0;
  if (!refuse && total >= config.maxConnections + kRejectSlack) {
    errors[kTooManyConnections]->inc();
    refuse = true;
  }
  if (!refuse && config.maxConnectionsPerClient > 0) {
    c->peer = peerAddress(c);
    if (!c->peer.empty() && perClient[c->peer] >= config.maxConnectionsPerClient) {
      errors[kTooManyFromClient]->inc();
      refuse = true;
    }
  }
  if (refuse) {
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
    return;
  }
  if (!c->peer.empty()) ++perClient[c->peer];
  uv_timer_init(loop, &c->timer);
  c->timer.data = c;
  c->openHandles = 2;
  uv_tcp_nodelay(&c->tcp, 1);
  c->next = conns;
  if (conns) conns->prev = c;
  conns = c;
  ++total;
  accepted->inc();
  c->idleSinceMs = c->writeProgressMs = uv_now(loop);
  if (config.tls) {
    c->tls = std::make_unique<TlsSession>(*config.tls);
    // No 503 without a handshake: an extra TLS connection, or one OpenSSL cannot serve, is closed.
    if (!c->tls->ok() || active >= config.maxConnections) {
      errors[kTooManyConnections]->inc();
      c->rejected = true;
      return closeNow(c);
    }
  }
  if (active >= config.maxConnections) {
    c->rejected = true;
    queueError(c, 503, kTooManyConnections, "too many connections\n");
    return;
  }
  ++active;
  open->set(active.load(std::memory_order_relaxed));
  updateReading(c);
  rearm(c);
}

// The client's IP address as raw bytes (4 or 16), "" when the socket cannot say.
std::string Server::Impl::peerAddress(Connection* c) {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getpeername(&c->tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr).sin_addr;
    return std::string(reinterpret_cast<const char*>(&a), sizeof a);
  }
  if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr;
    return std::string(reinterpret_cast<const char*>(&a), sizeof a);
  }
  return {};
}

void Server::Impl::closeNow(Connection* c) {
  if (c->state == ConnState::kClosing) return;
  c->state = ConnState::kClosing;
  if (!c->peer.empty()) {
    auto it = perClient.find(c->peer);
    if (it != perClient.end() && --it->second == 0) perClient.erase(it);
  }
  if (!c->rejected) {
    --active;
    open->set(active.load(std::memory_order_relaxed));
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), &Impl::onConnClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), &Impl::onConnClosed);
}

// Runs after check in the same loop iteration, so a closing connection is never dereferenced
// from the dirty list after it is freed.
void Server::Impl::onConnClosed(uv_handle_t* h) {
  auto* c = static_cast<Connection*>(h->data);
  if (--c->openHandles > 0) return;
  Impl* self = c->server;
  if (c->prev)
    c->prev->next = c->next;
  else
    self->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  --self->total;
  self->release(c->bodyCharged);  // queued writes were released by their cancelled callbacks
  // Deferred requests outlive their connection, and keep their body: the handler still holds them.
  for (size_t i = 0; i < c->used; ++i) {
    if (!c->slots[i]->waiting) {
      self->releaseSlot(c, *c->slots[i]);
      continue;
    }
    Slot* s = c->slots[i].release();
    s->conn = nullptr;
    s->orphanIndex = self->orphans.size();
    self->orphans.emplace_back(s);
  }
  delete c;
}

// Writes are done and nothing more will be read: send FIN, then drain input until the client
// closes, so a client still sending its (rejected) body sees our response instead of a reset.
void Server::Impl::finishDrain(Connection* c) {
  if (c->eof) return closeNow(c);
  if (c->tls) {
    c->tls->closeNotify();  // established sessions only; queued before the FIN
    flushTls(c);
    if (c->state == ConnState::kClosing) return;
  }
  c->state = ConnState::kLingering;
  if (uv_shutdown(&c->shutdownReq, reinterpret_cast<uv_stream_t*>(&c->tcp), [](uv_shutdown_t*, int) {}) !=
      0)
    return closeNow(c);
  c->lingerUntilMs = uv_now(loop) + config.lingerMs;
  updateReading(c);
  rearm(c);
}

bool Server::Impl::wantsRead(const Connection* c) const {
  if (c->eof) return false;
  if (c->state == ConnState::kLingering) return true;
  return c->state == ConnState::kOpen && c->used < config.maxPipelined && c->stash.empty() &&
         !writeBacklogged(c);
}

void Server::Impl::updateReading(Connection* c) {
  if (c->state == ConnState::kClosing) return;
  bool want = wantsRead(c);
  if (want == c->reading) return;
  auto* s = reinterpret_cast<uv_stream_t*>(&c->tcp);
  if (want) {
    if (uv_read_start(s, &Impl::onAlloc, &Impl::onRead) != 0) return closeNow(c);
  } else {
    uv_read_stop(s);
  }
  c->reading = want;
}

// ---- timeouts: one timer per connection, re-armed lazily ----

// The next moment something must happen to c, from its state; 0 = nothing pending.
uint64_t Server::Impl::deadline(const Connection* c) const {
  switch (c->state) {
    case ConnState::kClosing:
      return 0;
    case ConnState::kLingering:
      return c->lingerUntilMs;
    case ConnState::kDraining:
      if (c->pendingWrites > 0) return c->writeProgressMs + config.writeTimeoutMs;
      return c->used > 0 ? 0 : c->writeProgressMs + config.idleTimeoutMs;
    case ConnState::kOpen:
      break;
  }
  if (c->pendingWrites > 0) return c->writeProgressMs + config.writeTimeoutMs;
  if (c->tls && !c->tls->established()) return c->idleSinceMs + config.headerTimeoutMs;  // the handshake
  switch (c->parser.phase()) {
    case RequestParser::Phase::kHeaders:
      return c->requestStartMs + config.headerTimeoutMs;
    case RequestParser::Phase::kBody:
      return c->headersDoneMs + config.bodyTimeoutMs;
    case RequestParser::Phase::kIdle:
      break;
  }
  if (c->used > 0 || !c->stash.empty()) return 0;  // our turn to answer (perhaps deferred): not idle
  if (!c->anyByte && config.firstByteTimeoutMs > 0) return c->idleSinceMs + config.firstByteTimeoutMs;
  return c->idleSinceMs + config.idleTimeoutMs;
}

// Moving a deadline later costs nothing: the timer fires at the old time and re-arms itself.
void Server::Impl::rearm(Connection* c) {
  uint64_t d = deadline(c);
  if (d == 0 || (c->timerArmed && c->armedDeadline <= d)) return;
  uint64_t now = uv_now(loop);
  uv_timer_start(&c->timer, &Impl::onTimer, d > now ? d - now : 0, 0);
  c->timerArmed = true;
  c->armedDeadline = d;
}

void Server::Impl::onTimer(uv_timer_t* t) {
  auto* c = static_cast<Connection*>(t->data);
  Impl* self = c->server;
  c->timerArmed = false;
  uint64_t d = self->deadline(c);
  if (d == 0) return;
  if (uv_now(self->loop) < d) return self->rearm(c);
  self->expire(c);
}

void Server::Impl::expire(Connection* c) {
  if (c->state == ConnState::kLingering) return closeNow(c);
  if (c->pendingWrites > 0) {
    // A client reading a large answer slowly is not stalled: the queue shrank since last time.
    const size_t queued = uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t*>(&c->tcp));
    if (queued < c->queuedAtProgress) {
      c->queuedAtProgress = queued;
      c->writeProgressMs = uv_now(loop);
      return rearm(c);
    }
  }
  if (c->state == ConnState::kDraining || c->pendingWrites > 0) {
    errors[kWriteTimeout]->inc();
    return closeNow(c);
  }
  switch (c->parser.phase()) {
    case RequestParser::Phase::kHeaders:
      return queueError(c, 408, kHeaderTimeout, "timed out reading request headers\n");
    case RequestParser::Phase::kBody:
      return queueError(c, 408, kBodyTimeout, "timed out reading request body\n");
    case RequestParser::Phase::kIdle:
      if (c->tls && !c->tls->established()) {  // nothing can be answered before the handshake
        errors[kTlsHandshake]->inc();
        return closeNow(c);
      }
      if (!c->anyByte) {  // never said a word: no answer, no lingering
        errors[kFirstByteTimeout]->inc();
        return closeNow(c);
      }
      // Go's transport recognises a 408 on an idle connection and retires it quietly.
      return queueError(c, 408, kIdleTimeout, "idle connection timed out\n");
  }
}

// ---- listen / close ----

int Server::Impl::listen() {
  // libuv writes with write(2); a peer that vanished must cost an EPIPE, not the process.
  std::signal(SIGPIPE, SIG_IGN);
  sockaddr_storage addr{};
  std::string host = config.host;
  if (host == "localhost") host = "127.0.0.1";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int family = AF_INET;
  if (uv_ip4_addr(host.c_str(), config.port, reinterpret_cast<sockaddr_in*>(&addr)) != 0) {
    int rc = uv_ip6_addr(host.c_str(), config.port, reinterpret_cast<sockaddr_in6*>(&addr));
    if (rc != 0) return rc;
    family = AF_INET6;
  }
  int rc = uv_tcp_init_ex(loop, &listener, static_cast<unsigned>(family));
  if (rc != 0) return rc;
  listener.data = this;
  ++openHandles;
  listening = true;
  if (config.reusePort) {
    uv_os_fd_t fd;
    int one = 1;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&listener), &fd) == 0)
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  }
  if ((rc = uv_tcp_bind(&listener, reinterpret_cast<sockaddr*>(&addr), 0)) != 0) return rc;
  if ((rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener), config.backlog, &Impl::onConnection)) != 0)
    return rc;
  boundPort = readPort();
  uv_check_init(loop, &check);
  check.data = this;
  uv_idle_init(loop, &idle);
  idle.data = this;
  openHandles += 2;
  turnHandles = true;
  uv_check_start(&check, &Impl::onCheck);
  // The check handle must not keep the loop alive on its own; the listener does that.
  uv_unref(reinterpret_cast<uv_handle_t*>(&check));
  uv_unref(reinterpret_cast<uv_handle_t*>(&idle));
  return 0;
}

uint16_t Server::Impl::readPort() const {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getsockname(&listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void Server::Impl::closeListener() {
  if (!listening) return;
  listening = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&listener), &Impl::onOwnClosed);
}

void Server::Impl::shutdown() {
  if (closed || shuttingDown) return;
  shuttingDown = true;
  closeListener();
  for (Connection* c = conns; c; c = c->next) {
    if (c->state != ConnState::kOpen) continue;  // already ending after its answers
    // A request partly read is finished and answered first (consume() ends the connection
    // after it); its header and body timeouts still apply.
    if (c->parser.phase() != RequestParser::Phase::kIdle) continue;
    // Answer what is owed (deferred answers included), then FIN; an idle connection gets its
    // FIN now. Pipelined input not yet framed is dropped: Connection: close says so.
    c->stash.clear();
    c->state = ConnState::kDraining;
    updateReading(c);
    if (c->used == 0 && c->pendingWrites == 0)
      finishDrain(c);
    else
      rearm(c);
  }
}

size_t Server::Impl::pendingRequests() const {
  size_t n = 0;
  for (const Connection* c = conns; c; c = c->next) {
    if (c->state == ConnState::kClosing || c->rejected) continue;
    n += c->used;
    if (c->state == ConnState::kOpen && c->parser.phase() != RequestParser::Phase::kIdle) ++n;
  }
  return n;
}

void Server::Impl::close() {
  if (closed) return;
  closed = true;
  closeListener();
  if (turnHandles) {
    uv_close(reinterpret_cast<uv_handle_t*>(&check), &Impl::onOwnClosed);
    uv_close(reinterpret_cast<uv_handle_t*>(&idle), &Impl::onOwnClosed);
  }
  for (Connection* c = conns; c; c = c->next) closeNow(c);
}

// ---- Server ----

Server::Server(uv_loop_t* loop, ServerConfig config, BatchHandler& handler, Metrics& metrics)
    : impl_(std::make_unique<Impl>(loop, std::move(config), handler, metrics)) {}

Server::~Server() {
  impl_->close();
  while (impl_->openHandles > 0 || impl_->conns) uv_run(impl_->loop, UV_RUN_NOWAIT);
}

// An open session keeps its SSL_CTX alive (SSL_new takes a reference), so the old context may go.
void Server::setTls(std::shared_ptr<const TlsContext> tls) {
  if (impl_->config.tls && tls) impl_->config.tls = std::move(tls);
}

void Server::addGet(std::string path, GetHandler fn) {
  impl_->router.addGet(std::move(path));
  impl_->gets.push_back(std::move(fn));
}

int Server::listen() { return impl_->listen(); }
uint16_t Server::port() const { return impl_->boundPort; }
void Server::close() { impl_->close(); }
void Server::shutdown() { impl_->shutdown(); }
bool Server::drained() const {
  return impl_->shuttingDown && impl_->conns == nullptr && impl_->deferredCount.load() == 0;
}
size_t Server::pendingRequests() const { return impl_->pendingRequests(); }
size_t Server::connections() const { return impl_->active.load(std::memory_order_relaxed); }
size_t Server::deferredRequests() const { return impl_->deferredCount.load(std::memory_order_relaxed); }
size_t Server::bufferedBytes() const { return impl_->buffered.load(std::memory_order_relaxed); }

}  // namespace fleetsched::engine
