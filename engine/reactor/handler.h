// The seam between the HTTP reactor and the extender logic. The reactor frames HTTP requests;
// every extender request that completes within one loop turn is handed to the BatchHandler in
// one call, so the handler can take one cache snapshot for the whole batch. The handler fills
// each request's response; the reactor writes them all before the loop sleeps.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "codec/buffer.h"

namespace fleetsched::engine {

enum class Verb : uint8_t { Filter, Prioritize, Preempt, Bind };

std::string_view verbName(Verb v);

struct ExtenderRequest {
  Verb verb = Verb::Filter;
  // The request body. At least kBodyPadding readable bytes follow body.end(), so simdjson can
  // parse it in place.
  std::string_view body;
  // Response to fill: HTTP status (200 for every verb outcome, errors included, as
  // kube-scheduler expects) and JSON body (a codec::Buffer: encoders grow it without zero-filling).
  int status = 200;
  codec::Buffer response;
  // Set by the reactor: the request came over TLS with a client certificate that verified
  // against the listener's client CA (ServerConfig::tls). Always false on a plain listener.
  bool peerVerified = false;
  // Set by the handler: answer with `Connection: close` and end the connection after this
  // response, so the client's next request opens a new one (behind a Service: perhaps to another
  // replica). Honoured when the request is the last one the connection has sent.
  bool closeConnection = false;

  // Answering later (bind waits for kube-apiserver): during handleBatch the handler sets
  // `deferred`, keeps the pointer, and later — on the reactor thread — fills status/response
  // and calls `complete(this)` exactly once. The reactor holds this response (and the ones
  // after it on the same connection, which stay in order) until then; it is written in the
  // same loop turn or the next. If the client goes away or the server is close()d meanwhile,
  // the request (body included) stays valid until complete() is called, which then frees it
  // and drops its answer: after complete() the handler must not touch the request again.
  // The one exception: ~Server frees requests still deferred, so complete or forget every
  // pointer before destroying the server (Server::deferredRequests() counts them).
  // complete() from another thread is a data race: hop to the loop (uv_async_t) first.
  // Calling it inside handleBatch is allowed (the answer goes out with the batch).
  // While deferred, the request counts against maxPipelined and keeps its connection from
  // idling out; a handler that never completes pins the connection.
  bool deferred = false;
  void (*complete)(ExtenderRequest* self) = nullptr;  // set by the reactor
  void* reactorData = nullptr;                        // the reactor's own bookkeeping
};

constexpr size_t kBodyPadding = 64;

class BatchHandler {
 public:
  virtual ~BatchHandler() = default;
  // Called on the reactor thread with every request completed in this loop turn.
  virtual void handleBatch(std::span<ExtenderRequest*> batch) = 0;
  // Asked on the reactor thread for each extender request as it is framed (verb and body set):
  // true when handleBatch will defer it and evaluate it on another thread. The reactor then
  // frames no further request of its connection until its answer is queued, so a connection's
  // requests are still decided one after the other, in order (input that arrives meanwhile
  // waits, as behind maxPipelined). Must give the same answer in handleBatch.
  virtual bool answersOffLoop(const ExtenderRequest& /*req*/) const { return false; }
  // GET /readyz: true once the handler's state is usable (cache synced).
  virtual bool ready() const { return true; }
};

}  // namespace fleetsched::engine
