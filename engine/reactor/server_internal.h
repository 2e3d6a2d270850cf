// Private to engine/reactor/server*.cpp: the reactor's connection, response slot and Server::Impl
// declarations, and the constants and names they share. Not part of the engine's interface:
// include engine/reactor/server.h.
//
// Server::Impl's members are defined in two files:
//   server.cpp     listener, accept, connection lifecycle, timeouts, shutdown; the public Server
//   server_io.cpp  a connection's requests and responses: reading and framing, dispatch,
//                  deferred completion, batching and writing
#pragma once

#include <uv.h>

#include <array>
#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/reactor/body_buffer.h"
#include "engine/reactor/handler.h"
#include "engine/reactor/metrics.h"
#include "engine/reactor/request_parser.h"
#include "engine/reactor/router.h"
#include "engine/reactor/server.h"
#include "engine/reactor/tls.h"

namespace fleetsched::engine {

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
// A connection stops framing further pipelined requests while its held bodies and unsent
// answers reach this, and stops being read while its unsent answers alone do. (8 MiB of unsent
// answers, checked only between turns, let 80 clients that pipelined 32 NodeNames filters each
// and never read hold 22 MB apiece; issue 26.) One request is always taken, however large.
constexpr size_t kMaxQueuedWriteBytes = 1u << 20;
// Past maxConnections we still accept, answer 503 and close, up to this many extra sockets;
// beyond that, new sockets are closed without a word.
constexpr uint32_t kRejectSlack = 64;
constexpr uint32_t kMaxPipelinedCap = 256;  // keeps one flush within IOV_MAX buffers
constexpr std::string_view kJson = "application/json";
constexpr std::string_view kText = "text/plain; charset=utf-8";
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// TLS: plaintext is decrypted into a buffer of this size shared by the loop's connections;
// responses up to kTlsCoalesceBytes are gathered into one record.
constexpr size_t kTlsPlainBytes = 64 * 1024;
constexpr size_t kTlsCoalesceBytes = 16 * 1024;
// Answered, in plaintext, to an HTTP request sent to the TLS port (as Go's net/http does).
constexpr std::string_view kPlainHttpToTls =
    "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    "Client sent an HTTP request to an HTTPS server.\n";

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
  kOverBudget,
  // TLS listeners only (registered last, so a plain listener skips them):
  kTlsHandshake,  // a handshake failed or timed out
  kTlsError,      // a record could not be read or written after the handshake
  kErrorKindCount
};
constexpr std::string_view kErrorNames[kErrorKindCount] = {
    "bad_request",        "header_too_large",  "body_too_large",       "header_timeout",
    "body_timeout",       "idle_timeout",      "too_many_connections", "not_found",
    "method_not_allowed", "client_disconnect", "write_failed",         "write_timeout",
    "first_byte_timeout", "too_many_from_client", "over_budget",          "tls_handshake",
    "tls_error"};

inline std::string_view reasonPhrase(int status) {
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

inline void appendUint(std::string& out, uint64_t v) {
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
  size_t charged = 0;  // body bytes counted in Impl::buffered until the answer is written
  Server::Impl* server = nullptr;
  Connection* conn = nullptr;  // nullptr once orphaned
  size_t orphanIndex = 0;      // position in Impl::orphans while orphaned
  uint64_t startNs = 0;
  int8_t verb = -1;  // >= 0: an extender request
  bool handled = false;
  bool waiting = false;    // deferred by the handler, complete() not yet called
  bool completed = false;  // complete() called (possibly inside handleBatch)
  bool offLoop = false;    // BatchHandler::answersOffLoop: nothing is framed after it until answered
  bool http10 = false;
  bool keepAlive = true;

  Slot() = default;
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  // Keeps the response's and body's allocations up to `keep` bytes each for the next request.
  void reset(size_t keep = kRetainBytes) {
    if (req.response.capacity() > keep) req.response.release();
    req.response.clear();
    req.status = 200;
    req.body = {};
    req.deferred = false;
    req.closeConnection = false;
    body.clear(keep);
    allow = {};
    verb = -1;
    handled = false;
    completed = false;
    offLoop = false;
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
  std::string data;                    // copied bytes: status lines and headers, TLS records
  std::vector<codec::Buffer> answers;  // answers taken over whole rather than copied
  size_t charged = 0;                  // counted in Impl::buffered until written or cancelled
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
  std::vector<codec::Buffer*> owners;  // bufs[i]'s answer, which a queued write may take; or null
  // Bytes of Impl::buffered held by this connection: the body being received (its declared
  // length, from the end of its headers), bodies of requests not yet answered, answers queued.
  size_t bodyCharged = 0;
  size_t slotsCharged = 0;
  size_t outCharged = 0;
  size_t queuedAtProgress = 0;  // the write queue's size when writeProgressMs was last moved
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
  std::unique_ptr<TlsSession> tls;  // a TLS listener's connection; null: plain HTTP

  explicit Connection(RequestLimits limits) : parser(limits) {}
};

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
  // Request bodies held plus answers not yet taken by the sockets (config.maxBufferedBytes).
  std::atomic<size_t> buffered{0};
  std::unique_ptr<char[]> readBuf{new char[kReadBufferBytes]};
  std::unique_ptr<char[]> tlsPlain;  // kTlsPlainBytes, on TLS listeners only
  std::string tlsGather;             // small responses gathered into one TLS record
  std::vector<uv_buf_t> queued;      // writeSocket: the queued write's buffers (uv_write copies them)
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
  Counter* queuedCopies;
  Counter* bytesOut;
  Counter* accepted;
  Gauge* open;
  Gauge* deferredGauge;
  Gauge* bufferedGauge;

  Impl(uv_loop_t* l, ServerConfig c, BatchHandler& h, Metrics& m);  // registers the metrics

  RequestLimits limits() const { return {config.maxHeaderBytes, config.maxBodyBytes}; }

  // ---- connection lifecycle (server.cpp) ----

  static void onConnection(uv_stream_t* s, int status);
  void accept();
  static std::string peerAddress(Connection* c);
  void closeNow(Connection* c);
  static void onConnClosed(uv_handle_t* h);
  void finishDrain(Connection* c);
  bool wantsRead(const Connection* c) const;
  void updateReading(Connection* c);

  // ---- reading and framing (server_io.cpp) ----

  static void onAlloc(uv_handle_t* h, size_t, uv_buf_t* buf);
  static void onRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  void onEof(Connection* c, int err);
  void consume(Connection* c, const char* data, size_t len, uint64_t nowNs);
  void readTls(Connection* c, const char* data, size_t len);  // ciphertext in, plaintext to consume
  void failTls(Connection* c);
  Slot& nextSlot(Connection* c);
  void dispatch(Connection* c);
  void queueError(Connection* c, int status, ErrorKind kind, std::string_view msg);
  void markDirty(Connection* c);

  // ---- the buffered-bytes budget (server_io.cpp) ----

  void charge(size_t n);
  void release(size_t n);
  // Whether n more bytes fit the budget; if not, answers 503 and ends the connection.
  bool admit(Connection* c, size_t n);
  bool overBudget() const { return config.maxBufferedBytes > 0 && buffered.load(std::memory_order_relaxed) > config.maxBufferedBytes; }
  void releaseSlot(Connection* c, Slot& s);

  // ---- deferred completion (server_io.cpp) ----

  static void onComplete(ExtenderRequest* r);
  void complete(Slot* s);

  // ---- batching and writing (server_io.cpp) ----

  static void onCheck(uv_check_t* h) { static_cast<Impl*>(h->data)->runTurn(); }
  void runTurn();
  void flush(Connection* c);
  void writeRaw(Connection* c, std::string_view data);
  // owners (optional): per buffer, the answer it shows, which the write takes over when the
  // socket does not take it at once; other bytes are copied.
  void writeBufs(Connection* c, uv_buf_t* bufs, size_t n, size_t total, codec::Buffer* const* owners = nullptr);
  void writeSocket(Connection* c, uv_buf_t* bufs, size_t n, size_t total,
                   codec::Buffer* const* owners = nullptr);  // bytes as they are
  void writeTls(Connection* c, uv_buf_t* bufs, size_t n, size_t total);     // encrypted first
  void flushTls(Connection* c);  // the session's pending ciphertext to the socket
  static void onWrite(uv_write_t* req, int status);
  void afterFlush(Connection* c);
  bool writeBacklogged(const Connection* c) const;
  void pump(Connection* c);

  // ---- timeouts: one timer per connection, re-armed lazily (server.cpp) ----

  uint64_t deadline(const Connection* c) const;
  void rearm(Connection* c);
  static void onTimer(uv_timer_t* t);
  void expire(Connection* c);

  // ---- listen / close (server.cpp) ----

  int listen();
  uint16_t readPort() const;
  static void onOwnClosed(uv_handle_t* h) { --static_cast<Impl*>(h->data)->openHandles; }
  void closeListener();
  void shutdown();
  size_t pendingRequests() const;
  void close();
};

}  // namespace fleetsched::engine
