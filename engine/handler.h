// The seam between the HTTP reactor and the extender logic. The reactor frames HTTP requests;
// every extender request that completes within one loop turn is handed to the BatchHandler in
// one call, so the handler can take one cache snapshot for the whole batch. The handler fills
// each request's response; the reactor writes them all before the loop sleeps.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace fleetsched::engine {

enum class Verb : uint8_t { Filter, Prioritize, Preempt, Bind };

std::string_view verbName(Verb v);

struct ExtenderRequest {
  Verb verb = Verb::Filter;
  // The request body. At least kBodyPadding readable bytes follow body.end(), so simdjson can
  // parse it in place.
  std::string_view body;
  // Response to fill: HTTP status (200 for every verb outcome, errors included, as
  // kube-scheduler expects) and JSON body.
  int status = 200;
  std::string response;

  // Answering later (bind waits for kube-apiserver): during handleBatch the handler sets
  // `deferred`, keeps the pointer, and later — on the reactor thread — fills status/response
  // and calls `complete(this)` exactly once. The reactor holds this response (and the ones
  // after it on the same connection, which stay in order) until then. If the client goes away
  // meanwhile the request stays valid until complete() is called; its answer is dropped.
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
  // GET /readyz: true once the handler's state is usable (cache synced).
  virtual bool ready() const { return true; }
};

}  // namespace fleetsched::engine
