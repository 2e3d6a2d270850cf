#include "engine/server.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "engine/body_buffer.h"
#include "engine/request_parser.h"
#include "engine/router.h"

namespace fleetsched::engine {
namespace {

// One receive buffer for the whole loop: libuv reads one stream at a time and the parser copies
// what it keeps, so per-connection memory is only what a connection actually has in flight.
constexpr size_t kReadBufferBytes = 256 * 1024;
// Between requests a read goes into the request's body buffer: at least this much, and as much
// as the buffer has (a body buffer is sized for its body and a head; RequestParser::headRoom).
constexpr size_t kHeadReadBytes = 4096;
// Bodies with at least this much still to come are read into their own buffer (onAlloc), at
// most kMaxDirectBodyRead per read.
constexpr size_t kDirectBodyReadBytes = 4096;
constexpr size_t kMaxDirectBodyRead = 4u << 20;
// Buffers larger than this are released after their response instead of kept for reuse.
constexpr size_t kRetainBytes = 1u << 20;
// Stop reading from a client that does not read its responses once this much is queued.
constexpr size_t kMaxQueuedWriteBytes = 8u << 20;
// Past maxConnections we still accept, answer 503 and close, up to this many extra sockets;
// beyond that, new sockets are closed without a word.
constexpr uint32_t kRejectSlack = 64;
constexpr uint32_t kMaxPipelinedCap = 256;  // keeps one flush within IOV_MAX buffers
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kText = "text/plain; charset=utf-8";
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// Label values of fleetsched_http_requests_total.
enum RouteLabel : uint8_t {
  kRouteHealthz = kVerbCount,
  kRouteReadyz,
  kRouteMetrics,
  kRouteOther,
  kRouteCount
};
constexpr std::string_view kRouteNames[kRouteCount] = {"filter",  "prioritize", "preempt", "bind",
                                                       "healthz", "readyz",     "metrics", "other"};

enum ErrorKind : uint8_t {
  kBadRequest,
  kHeaderTooLarge,
  kBodyTooLarge,
  kHeaderTimeout,
  kBodyTimeout,
  kIdleTimeout,
  kTooManyConnections,
  kNotFound,
  kMethodNotAllowed,
  kClientDisconnect,
  kWriteFailed,
  kWriteTimeout,
  kFirstByteTimeout,
  kTooManyFromClient,
  kErrorKindCount
};
constexpr std::string_view kErrorNames[kErrorKindCount] = {
    "bad_request",        "header_too_large",  "body_too_large",       "header_timeout",
    "body_timeout",       "idle_timeout",      "too_many_connections", "not_found",
    "method_not_allowed", "client_disconnect", "write_failed",         "write_timeout",
    "first_byte_timeout", "too_many_from_client"};

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

void appendUint(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

struct Connection;

// One response owed to the client, in request order. Heap-allocated and never moved, so a
// deferred request's address stays put while its connection's slot list shifts; a deferred
// slot whose connection closes is handed to Server::Impl::orphans until complete().
struct Slot {
  ExtenderRequest req;  // status + response for every slot; verb + body for extender requests
  BodyBuffer body;
  std::string_view contentType;
  std::string_view allow;
  Server::Impl* server = nullptr;
  Connection* conn = nullptr;  // nullptr once orphaned
  size_t orphanIndex = 0;      // position in Impl::orphans while orphaned
  uint64_t startNs = 0;
  int8_t verb = -1;  // >= 0: an extender request
  bool handled = false;
  bool waiting = false;    // deferred by the handler, complete() not yet called
  bool completed = false;  // complete() called (possibly inside handleBatch)
  bool http10 = false;
  bool keepAlive = true;

  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  void reset() {
    if (req.response.capacity() > kRetainBytes) req.response.release();
    req.response.clear();
    req.status = 200;
    req.body = {};
    req.deferred = false;
    body.clear(kRetainBytes);
    allow = {};
    verb = -1;
    handled = false;
    completed = false;
  }
};

enum class ConnState : uint8_t {
  kOpen,       // reading and answering
  kDraining,   // no more requests: write what is owed, then shut down
  kLingering,  // FIN sent; discarding input until the client closes or lingerMs passes
  kClosing,    // uv_close called
};

struct WriteReq {
  uv_write_t req;
  Connection* conn;
  std::string data;
};

struct Connection {
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_shutdown_t shutdownReq;
  Server::Impl* server = nullptr;
  Connection* prev = nullptr;
  Connection* next = nullptr;
  RequestParser parser;
  std::vector<std::unique_ptr<Slot>> slots;
  size_t used = 0;    // slots[0, used) owe a response, in order; a waiting one holds back the rest
  std::string stash;  // input held back while maxPipelined requests wait
  std::string carry;  // input read after a request into its body buffer, still to frame
  uint64_t stashNs = 0;
  std::string peer;  // the client's raw IP address, counted in Impl::perClient; empty: not counted
  std::string head;  // status lines and headers of one flush
  std::vector<uv_buf_t> bufs;
  int pendingWrites = 0;
  int openHandles = 0;
  ConnState state = ConnState::kOpen;
  bool reading = false;
  bool dirty = false;
  bool eof = false;
  bool rejected = false;
  bool anyByte = false;  // a byte has arrived: the first-byte timeout no longer applies
  bool timerArmed = false;
  uint64_t armedDeadline = 0;
  uint64_t requestStartNs = 0;
  uint64_t requestStartMs = 0;
  uint64_t headersDoneMs = 0;
  uint64_t idleSinceMs = 0;
  uint64_t writeProgressMs = 0;
  uint64_t lingerUntilMs = 0;

  explicit Connection(RequestLimits limits) : parser(limits) {}
};

}  // namespace

struct Server::Impl {
  uv_loop_t* loop;
  ServerConfig config;
  BatchHandler& handler;
  Metrics& metrics;
  Router router;
  std::vector<GetHandler> gets;

  uv_tcp_t listener;
  uv_check_t check;
  uv_idle_t idle;
  int openHandles = 0;
  bool listening = false;
  bool turnHandles = false;  // check + idle initialised
  bool closed = false;
  bool shuttingDown = false;  // shutdown(): the listener is closed, connections end after their answers
  bool idleActive = false;
  uint16_t boundPort = 0;

  Connection* conns = nullptr;      // intrusive list of every connection
  std::unordered_map<std::string, uint32_t> perClient;  // open connections by raw client IP
  std::atomic<uint32_t> active{0};  // counted against maxConnections; read from any thread
  uint32_t total = 0;               // including rejected ones
  std::vector<Connection*> dirty;
  std::vector<Connection*> flushing;
  std::vector<ExtenderRequest*> batch;
  std::vector<size_t> offsets;  // per flush: where each response's head starts in Connection::head
  // Deferred requests whose connection closed before complete(); freed by complete() or, for
  // those never completed, with the server.
  std::vector<std::unique_ptr<Slot>> orphans;
  std::atomic<size_t> deferredCount{0};  // waiting for complete(); read from any thread
  std::unique_ptr<char[]> readBuf{new char[kReadBufferBytes]};
  std::string metricsText;  // /metrics rendered here, then copied into its slot
  uint64_t readNs = 0;

  // Metric handles: registered once, updated without lookups.
  std::array<Counter*, kRouteCount> requests{};
  std::array<Histogram*, kVerbCount> latency{};
  std::array<Counter*, kErrorKindCount> errors{};
  Histogram* readPhase;
  Histogram* writePhase;
  Histogram* batchPhase;
  Counter* batches;
  Counter* batchedRequests;
  Counter* bytesIn;
  Counter* bodyCopied;
  Counter* bytesOut;
  Counter* accepted;
  Gauge* open;
  Gauge* deferredGauge;

  Impl(uv_loop_t* l, ServerConfig c, BatchHandler& h, Metrics& m)
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
    for (size_t i = 0; i < kErrorKindCount; ++i)
      errors[i] = &m.counter("http_errors_total", "HTTP framing, limit and transport errors by kind",
                             with("kind", kErrorNames[i]));
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
    accepted = &m.counter("http_connections_accepted_total", "Connections accepted", with("", ""));
    open = &m.gauge("http_connections", "Open client connections", with("", ""));
    deferredGauge = &m.gauge("http_deferred_requests",
                             "Extender requests deferred by the handler and not yet completed", with("", ""));
  }

  RequestLimits limits() const { return {config.maxHeaderBytes, config.maxBodyBytes}; }

  // ---- connection lifecycle ----

  static void onConnection(uv_stream_t* s, int status) {
    auto* self = static_cast<Impl*>(s->data);
    if (status < 0) return;
    self->accept();
  }

  void accept() {
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
  static std::string peerAddress(Connection* c) {
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

  void closeNow(Connection* c) {
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
  static void onConnClosed(uv_handle_t* h) {
    auto* c = static_cast<Connection*>(h->data);
    if (--c->openHandles > 0) return;
    Impl* self = c->server;
    if (c->prev)
      c->prev->next = c->next;
    else
      self->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    --self->total;
    // Deferred requests outlive their connection: the handler still holds them.
    for (size_t i = 0; i < c->used; ++i) {
      if (!c->slots[i]->waiting) continue;
      Slot* s = c->slots[i].release();
      s->conn = nullptr;
      s->orphanIndex = self->orphans.size();
      self->orphans.emplace_back(s);
    }
    delete c;
  }

  // Writes are done and nothing more will be read: send FIN, then drain input until the client
  // closes, so a client still sending its (rejected) body sees our response instead of a reset.
  void finishDrain(Connection* c) {
    if (c->eof) return closeNow(c);
    c->state = ConnState::kLingering;
    if (uv_shutdown(&c->shutdownReq, reinterpret_cast<uv_stream_t*>(&c->tcp), [](uv_shutdown_t*, int) {}) !=
        0)
      return closeNow(c);
    c->lingerUntilMs = uv_now(loop) + config.lingerMs;
    updateReading(c);
    rearm(c);
  }

  bool wantsRead(const Connection* c) const {
    if (c->eof) return false;
    if (c->state == ConnState::kLingering) return true;
    return c->state == ConnState::kOpen && c->used < config.maxPipelined && c->stash.empty() &&
           !writeBacklogged(c);
  }

  void updateReading(Connection* c) {
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

  // ---- reading and framing ----

  static void onAlloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
    auto* c = static_cast<Connection*>(h->data);
    Impl* self = c->server;
    // Inside a Content-Length body: read straight into the request's padded body buffer, where
    // the parser counts the bytes instead of copying them out of the shared buffer (a 215 KB
    // NodeNames body was a 215 KB memmove). Never past the body's end, so the next pipelined
    // request still lands in the shared buffer.
    if (c->state == ConnState::kOpen && c->used < self->config.maxPipelined) {
      const size_t remaining = c->parser.bodyRemaining();
      char* at = nullptr;
      if (remaining >= kDirectBodyReadBytes) {
        const size_t n = c->parser.bodyRoom(std::min(remaining, kMaxDirectBodyRead), &at);
        *buf = uv_buf_init(at, static_cast<unsigned>(n));
        return;
      }
      // Between requests: into the next request's body buffer. A kube-scheduler request usually
      // arrives whole before we read it; then one read takes it all and its body stays where it
      // landed, after the head. (A read of the head alone, then of the body, took 3 read calls
      // per request, the last finding nothing: ~20 us of kernel time per pod more.)
      if (c->parser.phase() == RequestParser::Phase::kIdle) {
        const size_t n = c->parser.headRoom(kHeadReadBytes, &at);
        *buf = uv_buf_init(at, static_cast<unsigned>(std::min(n, kMaxDirectBodyRead)));
        return;
      }
    }
    *buf = uv_buf_init(self->readBuf.get(), kReadBufferBytes);
  }

  static void onRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
    auto* c = static_cast<Connection*>(s->data);
    Impl* self = c->server;
    if (nread == 0) return;
    if (nread < 0) return self->onEof(c, static_cast<int>(nread));
    self->bytesIn->inc(static_cast<uint64_t>(nread));
    c->anyByte = true;
    if (c->state != ConnState::kOpen) return;  // lingering: discard
    self->readNs = uv_hrtime();
    self->consume(c, buf->base, static_cast<size_t>(nread), self->readNs);
    self->updateReading(c);
    self->rearm(c);
    self->readPhase->observeNanos(uv_hrtime() - self->readNs);
  }

  void onEof(Connection* c, int err) {
    if (c->state == ConnState::kClosing) return;
    c->eof = true;
    updateReading(c);
    if (c->state == ConnState::kLingering) return closeNow(c);
    if (c->parser.phase() != RequestParser::Phase::kIdle) errors[kClientDisconnect]->inc();
    if (err != UV_EOF) return closeNow(c);  // reset: nothing we write can arrive
    // Half-closed: answer what was asked, then close.
    c->state = ConnState::kDraining;
    if (c->used == 0 && c->pendingWrites == 0) closeNow(c);
  }

  void consume(Connection* c, const char* data, size_t len, uint64_t nowNs) {
    while (len > 0 && c->state == ConnState::kOpen) {
      if (c->used >= config.maxPipelined) {
        c->stash.append(data, len);
        c->stashNs = nowNs;
        return;
      }
      RequestParser& p = c->parser;
      if (p.phase() == RequestParser::Phase::kIdle) {
        c->requestStartNs = nowNs;
        c->requestStartMs = uv_now(loop);
      }
      bool hadHeaders = p.phase() == RequestParser::Phase::kBody;
      const uint64_t copiedBefore = p.copiedBodyBytes();
      RequestParser::Result r = p.feed(data, len);
      bodyCopied->inc(p.copiedBodyBytes() - copiedBefore);
      data += r.consumed;
      len -= r.consumed;
      if (!hadHeaders && p.phase() == RequestParser::Phase::kBody) c->headersDoneMs = uv_now(loop);
      switch (r.status) {
        case RequestParser::Status::kNeedMore:
          break;
        case RequestParser::Status::kExpectContinue:
          // Only when nothing is owed before it; otherwise the client just sends after its wait.
          if (c->used == 0 && c->pendingWrites == 0) writeRaw(c, kContinue);
          break;
        case RequestParser::Status::kComplete:
          if (p.bodyUnsealed()) {
            // What followed the request in the same read sits right after its body, where the
            // body's padding goes: move it out first.
            c->carry.assign(data, len);
            data = c->carry.data();
            p.sealBody();
          }
          dispatch(c);
          // Shutting down: the request that was arriving is answered, the connection ends after it.
          if (!p.keepAlive() || shuttingDown) c->state = ConnState::kDraining;
          break;
        case RequestParser::Status::kError:
          switch (p.error()) {
            case ParseError::kHeaderTooLarge:
              queueError(c, 431, kHeaderTooLarge, "request header fields too large\n");
              break;
            case ParseError::kBodyTooLarge:
              queueError(c, 413, kBodyTooLarge, "request body too large\n");
              break;
            default: {
              std::string msg = "bad request: ";
              msg += p.errorReason();
              msg.push_back('\n');
              queueError(c, 400, kBadRequest, msg);
            }
          }
          return;
      }
    }
  }

  Slot& nextSlot(Connection* c) {
    if (c->used == c->slots.size()) {
      c->slots.push_back(std::make_unique<Slot>());
      c->slots.back()->server = this;
      c->slots.back()->conn = c;
    }
    Slot& s = *c->slots[c->used++];
    s.startNs = c->requestStartNs;
    s.http10 = c->parser.http10();
    s.keepAlive = c->parser.keepAlive();
    s.contentType = kText;
    markDirty(c);
    return s;
  }

  void dispatch(Connection* c) {
    RequestParser& p = c->parser;
    Router::Match m = router.match(p.method(), p.target());
    if (!config.serveVerbs && (m.kind == Router::Kind::kVerb || (m.kind == Router::Kind::kMethodNotAllowed &&
                                                                 m.allow == std::string_view("POST")))) {
      m.kind = Router::Kind::kNotFound;
    }
    Slot& s = nextSlot(c);
    switch (m.kind) {
      case Router::Kind::kVerb:
        s.verb = static_cast<int8_t>(m.verb);
        std::swap(s.body, p.body());
        s.req.verb = m.verb;
        s.req.body = s.body.view();
        s.contentType = kJson;
        requests[s.verb]->inc();
        return;
      case Router::Kind::kHealthz:
        s.req.response = "ok\n";
        requests[kRouteHealthz]->inc();
        return;
      case Router::Kind::kReadyz:
        if (!shuttingDown && handler.ready()) {
          s.req.response = "ready\n";
        } else {
          s.req.status = 503;
          s.req.response = "not ready\n";
        }
        requests[kRouteReadyz]->inc();
        return;
      case Router::Kind::kMetrics:
        requests[kRouteMetrics]->inc();
        metricsText.clear();
        metrics.render(metricsText);  // appends
        s.req.response = metricsText;
        s.contentType = Metrics::kContentType;
        return;
      case Router::Kind::kCustom: {
        requests[kRouteOther]->inc();
        LocalResponse out;
        gets[m.custom](p.target(), out);
        s.req.status = out.status;
        s.req.response = std::move(out.body);
        s.contentType = out.contentType;
        return;
      }
      case Router::Kind::kNotFound:
        requests[kRouteOther]->inc();
        errors[kNotFound]->inc();
        s.req.status = 404;
        s.req.response = "not found\n";
        return;
      case Router::Kind::kMethodNotAllowed:
        requests[kRouteOther]->inc();
        errors[kMethodNotAllowed]->inc();
        s.req.status = 405;
        s.req.response = "method not allowed\n";
        s.allow = m.allow;
        return;
    }
  }

  // Queues an engine error response and ends the connection after it.
  void queueError(Connection* c, int status, ErrorKind kind, std::string_view msg) {
    errors[kind]->inc();
    Slot& s = nextSlot(c);
    s.req.status = status;
    s.req.response.assign(msg);
    s.keepAlive = false;
    c->stash.clear();
    c->state = ConnState::kDraining;
    updateReading(c);
  }

  void markDirty(Connection* c) {
    if (c->dirty || closed) return;  // after close() every connection is closing anyway
    c->dirty = true;
    dirty.push_back(c);
    // An active idle handle keeps the next poll from blocking, so responses queued outside the
    // poll phase (timers, resumed pipelines) are still flushed this turn.
    if (!idleActive) {
      uv_idle_start(&idle, [](uv_idle_t*) {});
      idleActive = true;
    }
  }

  // ---- deferred completion ----

  static void onComplete(ExtenderRequest* r) {
    auto* s = static_cast<Slot*>(r->reactorData);
    s->server->complete(s);
  }

  void complete(Slot* s) {
    assert(!s->completed && "ExtenderRequest::complete called twice");
    s->completed = true;
    if (!s->waiting) return;  // called inside handleBatch: flushed with its batch
    s->waiting = false;
    deferredGauge->set(static_cast<double>(--deferredCount));
    Connection* c = s->conn;
    if (c == nullptr) {  // the client is gone: drop the answer
      size_t i = s->orphanIndex;
      if (i + 1 != orphans.size()) {
        orphans[i].swap(orphans.back());
        orphans[i]->orphanIndex = i;
      }
      orphans.pop_back();
      return;
    }
    // A closing connection may be freed before the next check runs; it writes nothing anyway.
    if (c->state == ConnState::kClosing) return;
    markDirty(c);
  }

  // ---- batching and writing ----

  static void onCheck(uv_check_t* h) { static_cast<Impl*>(h->data)->runTurn(); }

  void runTurn() {
    if (dirty.empty()) {
      if (idleActive) {
        uv_idle_stop(&idle);
        idleActive = false;
      }
      return;
    }
    batch.clear();
    for (Connection* c : dirty) {
      if (c->state == ConnState::kClosing) continue;
      for (size_t i = 0; i < c->used; ++i) {
        Slot& s = *c->slots[i];
        if (s.verb >= 0 && !s.handled) {
          s.handled = true;
          s.req.complete = &Impl::onComplete;
          s.req.reactorData = &s;
          batch.push_back(&s.req);
        }
      }
    }
    if (!batch.empty()) {
      uint64_t t0 = uv_hrtime();
      handler.handleBatch(std::span<ExtenderRequest*>(batch));
      batchPhase->observeNanos(uv_hrtime() - t0);
      for (ExtenderRequest* r : batch) {
        auto* s = static_cast<Slot*>(r->reactorData);
        if (r->deferred && !s->completed) {
          s->waiting = true;
          deferredGauge->set(static_cast<double>(++deferredCount));
        }
      }
      batches->inc();
      batchedRequests->inc(batch.size());
    }
    uint64_t t0 = uv_hrtime();
    flushing.swap(dirty);
    dirty.clear();
    for (Connection* c : flushing) {
      c->dirty = false;
      if (c->state == ConnState::kClosing) continue;
      flush(c);
      afterFlush(c);
    }
    flushing.clear();
    writePhase->observeNanos(uv_hrtime() - t0);
    if (dirty.empty() && idleActive) {
      uv_idle_stop(&idle);
      idleActive = false;
    }
  }

  // Writes the responses ready in order: up to the first request still deferred.
  void flush(Connection* c) {
    size_t ready = 0;
    while (ready < c->used && !c->slots[ready]->waiting) ++ready;
    if (ready == 0) return;
    c->head.clear();
    offsets.resize(ready + 1);
    for (size_t i = 0; i < ready; ++i) {
      const Slot& s = *c->slots[i];
      offsets[i] = c->head.size();
      std::string& h = c->head;
      h += "HTTP/1.1 ";
      appendUint(h, static_cast<uint64_t>(s.req.status));
      h.push_back(' ');
      h += reasonPhrase(s.req.status);
      h += "\r\nContent-Type: ";
      h += s.contentType;
      h += "\r\nContent-Length: ";
      appendUint(h, s.req.response.size());
      if (!s.allow.empty()) {
        h += "\r\nAllow: ";
        h += s.allow;
      }
      bool last = i + 1 == c->used;
      if (!s.keepAlive || (last && c->state != ConnState::kOpen))
        h += "\r\nConnection: close";
      else if (s.http10)
        h += "\r\nConnection: keep-alive";
      h += "\r\n\r\n";
    }
    offsets[ready] = c->head.size();
    c->bufs.clear();
    size_t total = 0;
    for (size_t i = 0; i < ready; ++i) {
      const Slot& s = *c->slots[i];
      c->bufs.push_back(
          uv_buf_init(c->head.data() + offsets[i], static_cast<unsigned>(offsets[i + 1] - offsets[i])));
      if (!s.req.response.empty())
        c->bufs.push_back(uv_buf_init(const_cast<char*>(s.req.response.data()),
                                      static_cast<unsigned>(s.req.response.size())));
      total += offsets[i + 1] - offsets[i] + s.req.response.size();
    }
    writeBufs(c, c->bufs.data(), c->bufs.size(), total);
    uint64_t now = uv_hrtime();
    for (size_t i = 0; i < ready; ++i) {
      Slot& s = *c->slots[i];
      if (s.verb >= 0) latency[s.verb]->observeNanos(now - s.startNs);
      s.reset();
    }
    // Responses held back behind a deferred one move to the front; the slots stay where they are.
    if (ready < c->used) std::rotate(c->slots.begin(), c->slots.begin() + ready, c->slots.begin() + c->used);
    c->used -= ready;
    c->idleSinceMs = uv_now(loop);
  }

  void writeRaw(Connection* c, std::string_view data) {
    uv_buf_t b = uv_buf_init(const_cast<char*>(data.data()), static_cast<unsigned>(data.size()));
    writeBufs(c, &b, 1, data.size());
  }

  // Tries to write everything now; whatever the socket does not take is copied and queued.
  void writeBufs(Connection* c, uv_buf_t* bufs, size_t n, size_t total) {
    bytesOut->inc(total);
    auto* s = reinterpret_cast<uv_stream_t*>(&c->tcp);
    size_t written = 0;
    if (c->pendingWrites == 0) {
      int rc = uv_try_write(s, bufs, static_cast<unsigned>(n));
      if (rc >= 0) {
        written = static_cast<size_t>(rc);
      } else if (rc != UV_EAGAIN) {
        errors[kWriteFailed]->inc();
        return closeNow(c);
      }
    }
    if (written == total) return;
    auto* w = new WriteReq;
    w->conn = c;
    w->data.reserve(total - written);
    size_t skip = written;
    for (size_t i = 0; i < n; ++i) {
      size_t len = bufs[i].len;
      if (skip >= len) {
        skip -= len;
        continue;
      }
      w->data.append(bufs[i].base + skip, len - skip);
      skip = 0;
    }
    uv_buf_t b = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    w->req.data = w;
    if (uv_write(&w->req, s, &b, 1, &Impl::onWrite) != 0) {
      delete w;
      errors[kWriteFailed]->inc();
      return closeNow(c);
    }
    ++c->pendingWrites;
    c->writeProgressMs = uv_now(loop);
  }

  static void onWrite(uv_write_t* req, int status) {
    auto* w = static_cast<WriteReq*>(req->data);
    Connection* c = w->conn;
    delete w;
    Impl* self = c->server;
    --c->pendingWrites;
    if (c->state == ConnState::kClosing) return;
    if (status < 0) {
      self->errors[kWriteFailed]->inc();
      return self->closeNow(c);
    }
    c->writeProgressMs = uv_now(self->loop);
    if (c->state == ConnState::kDraining && c->pendingWrites == 0 && c->used == 0)
      return self->finishDrain(c);
    self->pump(c);
  }

  void afterFlush(Connection* c) {
    if (c->state == ConnState::kClosing) return;
    if (c->state == ConnState::kDraining) {
      if (c->pendingWrites == 0 && c->used == 0)  // used > 0: a deferred response is still owed
        finishDrain(c);
      else
        rearm(c);
      return;
    }
    pump(c);
  }

  bool writeBacklogged(const Connection* c) const {
    return uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&c->tcp)) >=
           kMaxQueuedWriteBytes;
  }

  // Moves an open connection on once responses are queued or written: frames the stashed input
  // (unless the client is not reading what we already owe it), then resumes reading.
  void pump(Connection* c) {
    if (c->state == ConnState::kOpen && !c->stash.empty() && !writeBacklogged(c)) {
      std::string pending;
      pending.swap(c->stash);
      consume(c, pending.data(), pending.size(), c->stashNs);
      if (c->stash.empty()) {
        pending.clear();
        c->stash.swap(pending);  // keep the capacity
      }
    }
    updateReading(c);
    rearm(c);
  }

  // ---- timeouts: one timer per connection, re-armed lazily ----

  // The next moment something must happen to c, from its state; 0 = nothing pending.
  uint64_t deadline(const Connection* c) const {
    switch (c->state) {
      case ConnState::kClosing:
        return 0;
      case ConnState::kLingering:
        return c->lingerUntilMs;
      case ConnState::kDraining:
        if (c->pendingWrites > 0) return c->writeProgressMs + config.idleTimeoutMs;
        return c->used > 0 ? 0 : c->writeProgressMs + config.idleTimeoutMs;
      case ConnState::kOpen:
        break;
    }
    if (c->pendingWrites > 0) return c->writeProgressMs + config.idleTimeoutMs;
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
  void rearm(Connection* c) {
    uint64_t d = deadline(c);
    if (d == 0 || (c->timerArmed && c->armedDeadline <= d)) return;
    uint64_t now = uv_now(loop);
    uv_timer_start(&c->timer, &Impl::onTimer, d > now ? d - now : 0, 0);
    c->timerArmed = true;
    c->armedDeadline = d;
  }

  static void onTimer(uv_timer_t* t) {
    auto* c = static_cast<Connection*>(t->data);
    Impl* self = c->server;
    c->timerArmed = false;
    uint64_t d = self->deadline(c);
    if (d == 0) return;
    if (uv_now(self->loop) < d) return self->rearm(c);
    self->expire(c);
  }

  void expire(Connection* c) {
    if (c->state == ConnState::kLingering) return closeNow(c);
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
        if (!c->anyByte) {  // never said a word: no answer, no lingering
          errors[kFirstByteTimeout]->inc();
          return closeNow(c);
        }
        // Go's transport recognises a 408 on an idle connection and retires it quietly.
        return queueError(c, 408, kIdleTimeout, "idle connection timed out\n");
    }
  }

  // ---- listen / close ----

  int listen() {
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

  uint16_t readPort() const {
    sockaddr_storage addr{};
    int len = sizeof addr;
    if (uv_tcp_getsockname(&listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
    if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  }

  static void onOwnClosed(uv_handle_t* h) { --static_cast<Impl*>(h->data)->openHandles; }

  void closeListener() {
    if (!listening) return;
    listening = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&listener), &Impl::onOwnClosed);
  }

  void shutdown() {
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

  size_t pendingRequests() const {
    size_t n = 0;
    for (const Connection* c = conns; c; c = c->next) {
      if (c->state == ConnState::kClosing || c->rejected) continue;
      n += c->used;
      if (c->state == ConnState::kOpen && c->parser.phase() != RequestParser::Phase::kIdle) ++n;
    }
    return n;
  }

  void close() {
    if (closed) return;
    closed = true;
    closeListener();
    if (turnHandles) {
      uv_close(reinterpret_cast<uv_handle_t*>(&check), &Impl::onOwnClosed);
      uv_close(reinterpret_cast<uv_handle_t*>(&idle), &Impl::onOwnClosed);
    }
    for (Connection* c = conns; c; c = c->next) closeNow(c);
  }
};

Server::Server(uv_loop_t* loop, ServerConfig config, BatchHandler& handler, Metrics& metrics)
    : impl_(std::make_unique<Impl>(loop, std::move(config), handler, metrics)) {}

Server::~Server() {
  impl_->close();
  while (impl_->openHandles > 0 || impl_->conns) uv_run(impl_->loop, UV_RUN_NOWAIT);
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

}  // namespace fleetsched::engine
