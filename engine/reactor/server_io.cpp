// Server::Impl, a connection's requests and responses: reading and framing each read, dispatch
// to the routes, deferred completion, and one batch per loop turn with corked writes. The
// listener, connection lifecycle and timeouts are in server.cpp.
#include "engine/reactor/server_internal.h"

#include <algorithm>
#include <cassert>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace fleetsched::engine {

// ---- reading and framing ----

void Server::Impl::onAlloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* c = static_cast<Connection*>(h->data);
  Impl* self = c->server;
  if (c->tls) {  // ciphertext: into the shared buffer, decrypted from there (readTls)
    *buf = uv_buf_init(self->readBuf.get(), kReadBufferBytes);
    return;
  }
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

void Server::Impl::onRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  auto* c = static_cast<Connection*>(s->data);
  Impl* self = c->server;
  if (nread == 0) return;
  if (nread < 0) return self->onEof(c, static_cast<int>(nread));
  self->bytesIn->inc(static_cast<uint64_t>(nread));
  c->anyByte = true;
  if (c->state != ConnState::kOpen) return;  // lingering: discard
  if (c->tls) return self->readTls(c, buf->base, static_cast<size_t>(nread));
  self->readNs = uv_hrtime();
  self->consume(c, buf->base, static_cast<size_t>(nread), self->readNs);
  self->updateReading(c);
  self->rearm(c);
  self->readPhase->observeNanos(uv_hrtime() - self->readNs);
}

void Server::Impl::onEof(Connection* c, int err) {
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

// TLS: ciphertext into the session, every complete record's plaintext to consume(), then what
// the session has to say (handshake messages, alerts) to the socket.
void Server::Impl::readTls(Connection* c, const char* data, size_t len) {
  readNs = uv_hrtime();
  TlsSession& t = *c->tls;
  t.receive(data, len);
  while (c->state == ConnState::kOpen) {
    const ssize_t n = t.read(tlsPlain.get(), kTlsPlainBytes);
    if (n > 0) {
      consume(c, tlsPlain.get(), static_cast<size_t>(n), readNs);
      continue;
    }
    if (n == TlsSession::kNeedMore) break;
    if (n == TlsSession::kClosed) {  // close_notify: the client's end of input, as a FIN is
      flushTls(c);
      if (c->state != ConnState::kClosing) onEof(c, UV_EOF);
      return;
    }
    return failTls(c);
  }
  flushTls(c);
  if (c->state == ConnState::kClosing) return;
  updateReading(c);
  rearm(c);
  readPhase->observeNanos(uv_hrtime() - readNs);
}

// A handshake or record failure: the alert OpenSSL wrote (or, to a plain HTTP client, a
// plaintext 400) goes out, then the FIN; nothing more is read or answered on the connection.
void Server::Impl::failTls(Connection* c) {
  TlsSession& t = *c->tls;
  errors[t.established() ? kTlsError : kTlsHandshake]->inc();
  if (t.plainHttp()) {
    uv_buf_t b = uv_buf_init(const_cast<char*>(kPlainHttpToTls.data()), static_cast<unsigned>(kPlainHttpToTls.size()));
    writeSocket(c, &b, 1, kPlainHttpToTls.size());
  } else {
    flushTls(c);
  }
  if (c->state == ConnState::kClosing) return;
  c->stash.clear();
  // Answers still owed (a deferred bind) can no longer be sent: orphan them now.
  if (c->used > 0) return closeNow(c);
  c->state = ConnState::kDraining;
  updateReading(c);
  if (c->pendingWrites == 0) return finishDrain(c);
  rearm(c);
}

void Server::Impl::consume(Connection* c, const char* data, size_t len, uint64_t nowNs) {
  while (len > 0 && c->state == ConnState::kOpen) {
    // Between requests, a connection already holding kMaxQueuedWriteBytes of bodies and unsent
    // answers frames no more: the rest waits until its answers are written. Nor does one whose
    // last request is answered off the loop thread, until that answer is queued.
    if (c->used >= config.maxPipelined ||
        (c->used > 0 && (c->slots[c->used - 1]->offLoop ||
                         (c->parser.phase() == RequestParser::Phase::kIdle &&
                          c->slotsCharged + c->outCharged >= kMaxQueuedWriteBytes)))) {
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
    if (!hadHeaders && p.phase() == RequestParser::Phase::kBody) {
      c->headersDoneMs = uv_now(loop);
      // The body's declared length is counted from here, before its bytes arrive.
      if (const uint64_t declared = p.declaredLength(); declared > 0) {
        if (!admit(c, declared)) return;
        c->bodyCharged = declared;
        charge(declared);
      }
    }
    switch (r.status) {
      case RequestParser::Status::kNeedMore:
        break;
      case RequestParser::Status::kExpectContinue:
        // Only when nothing is owed before it; otherwise the client just sends after its wait.
        if (c->used == 0 && c->pendingWrites == 0) writeRaw(c, kContinue);
        break;
      case RequestParser::Status::kComplete:
        // A body that came whole in one read (or chunked) is counted only now.
        if (c->bodyCharged == 0 && !p.body().view().empty() && !admit(c, p.body().size())) return;
        if (p.bodyUnsealed()) {
          // What followed the request in the same read sits right after its body, where the
          // body's padding goes: move it out first.
          c->carry.assign(data, len);
          data = c->carry.data();
          p.sealBody();
        }
        dispatch(c);
        release(c->bodyCharged);  // an extender request's slot counts its body now
        c->bodyCharged = 0;
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

Slot& Server::Impl::nextSlot(Connection* c) {
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

void Server::Impl::dispatch(Connection* c) {
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
      s.req.peerVerified = c->tls != nullptr && c->tls->peerVerified();
      s.offLoop = handler.answersOffLoop(s.req);
      s.charged = s.body.size();
      c->slotsCharged += s.charged;
      charge(s.charged);
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
void Server::Impl::queueError(Connection* c, int status, ErrorKind kind, std::string_view msg) {
  errors[kind]->inc();
  Slot& s = nextSlot(c);
  s.req.status = status;
  s.req.response.assign(msg);
  s.keepAlive = false;
  c->stash.clear();
  c->state = ConnState::kDraining;
  updateReading(c);
}

// ---- the buffered-bytes budget ----

void Server::Impl::charge(size_t n) {
  if (n == 0) return;
  bufferedGauge->set(static_cast<double>(buffered.fetch_add(n, std::memory_order_relaxed) + n));
}

void Server::Impl::release(size_t n) {
  if (n == 0) return;
  bufferedGauge->set(static_cast<double>(buffered.fetch_sub(n, std::memory_order_relaxed) - n));
}

void Server::Impl::releaseSlot(Connection* c, Slot& s) {
  if (c != nullptr) c->slotsCharged -= s.charged;
  release(s.charged);
  s.charged = 0;
}

// 503 rather than waiting for room: the bytes held belong to clients that may never read, so
// room may come only with the write timeout, and kube-scheduler retries a failed call at its
// next cycle anyway. Closing ends the body's transfer (lingering drains what is in flight).
bool Server::Impl::admit(Connection* c, size_t n) {
  const size_t held = buffered.load(std::memory_order_relaxed);
  if (config.maxBufferedBytes == 0 || (n <= config.maxBufferedBytes && held <= config.maxBufferedBytes - n))
    return true;
  std::string msg = "server busy: a request body of ";
  appendUint(msg, n);
  msg += " bytes does not fit: request bodies and unsent answers already hold ";
  appendUint(msg, held);
  msg += " of the ";
  appendUint(msg, config.maxBufferedBytes);
  msg += " bytes allowed (fleetsched serve --max-buffered-bytes); retry later\n";
  queueError(c, 503, kOverBudget, msg);
  return false;
}

void Server::Impl::markDirty(Connection* c) {
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

void Server::Impl::onComplete(ExtenderRequest* r) {
  auto* s = static_cast<Slot*>(r->reactorData);
  s->server->complete(s);
}

void Server::Impl::complete(Slot* s) {
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
    releaseSlot(nullptr, *s);
    orphans.pop_back();
    return;
  }
  // A closing connection may be freed before the next check runs; it writes nothing anyway.
  if (c->state == ConnState::kClosing) return;
  markDirty(c);
}

// ---- batching and writing ----

void Server::Impl::runTurn() {
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
void Server::Impl::flush(Connection* c) {
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
    if (last && s.req.closeConnection && c->state == ConnState::kOpen) c->state = ConnState::kDraining;
    if (!s.keepAlive || (last && c->state != ConnState::kOpen))
      h += "\r\nConnection: close";
    else if (s.http10)
      h += "\r\nConnection: keep-alive";
    h += "\r\n\r\n";
  }
  offsets[ready] = c->head.size();
  c->bufs.clear();
  c->owners.clear();
  size_t total = 0;
  for (size_t i = 0; i < ready; ++i) {
    Slot& s = *c->slots[i];
    c->bufs.push_back(
        uv_buf_init(c->head.data() + offsets[i], static_cast<unsigned>(offsets[i + 1] - offsets[i])));
    c->owners.push_back(nullptr);
    if (!s.req.response.empty()) {
      c->bufs.push_back(uv_buf_init(s.req.response.data(), static_cast<unsigned>(s.req.response.size())));
      c->owners.push_back(&s.req.response);
    }
    total += offsets[i + 1] - offsets[i] + s.req.response.size();
  }
  writeBufs(c, c->bufs.data(), c->bufs.size(), total, c->owners.data());
  // A client that did not take its answers keeps no buffers for requests it may never send: 80
  // that never read kept ~3.6 MB each in their slots beside the 132 MB counted (456 MB resident).
  const size_t keep = c->outCharged > 0 ? 0 : kRetainBytes;
  uint64_t now = uv_hrtime();
  for (size_t i = 0; i < ready; ++i) {
    Slot& s = *c->slots[i];
    if (s.verb >= 0) latency[s.verb]->observeNanos(now - s.startNs);
    releaseSlot(c, s);  // the answer's unsent bytes, if any, are counted by writeBufs
    s.reset(keep);
  }
  // Responses held back behind a deferred one move to the front; the slots stay where they are.
  if (ready < c->used) std::rotate(c->slots.begin(), c->slots.begin() + ready, c->slots.begin() + c->used);
  c->used -= ready;
  c->idleSinceMs = uv_now(loop);
}

void Server::Impl::writeRaw(Connection* c, std::string_view data) {
  uv_buf_t b = uv_buf_init(const_cast<char*>(data.data()), static_cast<unsigned>(data.size()));
  writeBufs(c, &b, 1, data.size());
}

void Server::Impl::writeBufs(Connection* c, uv_buf_t* bufs, size_t n, size_t total, codec::Buffer* const* owners) {
  bytesOut->inc(total);
  if (c->tls) return writeTls(c, bufs, n, total);
  writeSocket(c, bufs, n, total, owners);
}

// Encrypts the buffers (small responses gathered into one record), then writes the records.
void Server::Impl::writeTls(Connection* c, uv_buf_t* bufs, size_t n, size_t total) {
  TlsSession& t = *c->tls;
  bool ok = true;
  if (n > 1 && total <= kTlsCoalesceBytes) {
    tlsGather.clear();
    for (size_t i = 0; i < n; ++i) tlsGather.append(bufs[i].base, bufs[i].len);
    ok = t.write(tlsGather.data(), tlsGather.size());
  } else {
    for (size_t i = 0; i < n && ok; ++i)
      if (bufs[i].len > 0) ok = t.write(bufs[i].base, bufs[i].len);
  }
  if (!ok) {
    errors[kTlsError]->inc();
    return closeNow(c);
  }
  flushTls(c);
}

void Server::Impl::flushTls(Connection* c) {
  std::string_view out = c->tls->pendingOutput();
  if (out.empty() || c->state == ConnState::kClosing) return;
  uv_buf_t b = uv_buf_init(const_cast<char*>(out.data()), static_cast<unsigned>(out.size()));
  writeSocket(c, &b, 1, out.size());  // copies what the socket does not take at once
  c->tls->discardOutput();
}

// Tries to write everything now; whatever the socket does not take is queued: answers with an
// owner are taken over, the rest is copied. Copying answers was the loop's longest callback: a
// CPU pod's full-Nodes filter against 5,000 nodes (a 62 MB body) has a 45 MB answer, the socket
// took ~4.5 MB at once, and copying the other ~41 MB took 17-23 ms while other callers waited
// (0.7-1.3 ms without the copy).
void Server::Impl::writeSocket(Connection* c, uv_buf_t* bufs, size_t n, size_t total,
                               codec::Buffer* const* owners) {
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
  // The unsent part of bufs[i]: from `skip` on for the first one partly written.
  auto unsent = [&](auto&& each) {
    size_t skip = written;
    for (size_t i = 0; i < n; ++i) {
      const size_t len = bufs[i].len;
      if (skip >= len) {
        skip -= len;
        continue;
      }
      each(i, bufs[i].base + skip, len - skip);
      skip = 0;
    }
  };
  size_t copied = 0;
  unsent([&](size_t i, const char*, size_t len) {
    if (owners == nullptr || owners[i] == nullptr) copied += len;
  });
  w->data.reserve(copied);  // appends below never move what queued already points into
  queuedCopies->inc(copied);
  queued.clear();
  unsent([&](size_t i, const char* at, size_t len) {
    if (owners != nullptr && owners[i] != nullptr) {
      w->charged += owners[i]->capacity();
      w->answers.push_back(std::move(*owners[i]));  // the bytes stay where they are
      queued.push_back(uv_buf_init(const_cast<char*>(at), static_cast<unsigned>(len)));
      return;
    }
    char* to = w->data.data() + w->data.size();
    w->data.append(at, len);
    if (!queued.empty() && queued.back().base + queued.back().len == to)
      queued.back().len += static_cast<unsigned>(len);
    else
      queued.push_back(uv_buf_init(to, static_cast<unsigned>(len)));
  });
  w->charged += w->data.size();
  w->req.data = w;
  if (uv_write(&w->req, s, queued.data(), static_cast<unsigned>(queued.size()), &Impl::onWrite) != 0) {
    delete w;
    errors[kWriteFailed]->inc();
    return closeNow(c);
  }
  ++c->pendingWrites;
  c->outCharged += w->charged;
  charge(w->charged);
  c->writeProgressMs = uv_now(loop);
  c->queuedAtProgress = uv_stream_get_write_queue_size(s);
}

void Server::Impl::onWrite(uv_write_t* req, int status) {
  auto* w = static_cast<WriteReq*>(req->data);
  Connection* c = w->conn;
  Impl* self = c->server;
  c->outCharged -= w->charged;
  self->release(w->charged);  // written, or cancelled by the connection's close
  delete w;
  --c->pendingWrites;
  if (c->state == ConnState::kClosing) return;
  if (status < 0) {
    self->errors[kWriteFailed]->inc();
    return self->closeNow(c);
  }
  c->writeProgressMs = uv_now(self->loop);
  c->queuedAtProgress = uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t*>(&c->tcp));
  if (c->state == ConnState::kDraining && c->pendingWrites == 0 && c->used == 0)
    return self->finishDrain(c);
  self->pump(c);
}

void Server::Impl::afterFlush(Connection* c) {
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

// Unsent answers past the per-connection bound, or any while the server is over its budget.
bool Server::Impl::writeBacklogged(const Connection* c) const {
  return c->outCharged >= kMaxQueuedWriteBytes || (c->outCharged > 0 && overBudget());
}

// Moves an open connection on once responses are queued or written: frames the stashed input
// (unless the client is not reading what we already owe it), then resumes reading.
void Server::Impl::pump(Connection* c) {
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

}  // namespace fleetsched::engine
