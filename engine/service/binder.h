// Binder: how the extender service reaches kube-apiserver and the cache writer's turn without
// knowing who provides them. engine::Ingestor implements it (its thread owns the API client and
// is the cache's other writer); tests may provide their own.
//
// Threads: every call is made on the reactor thread, and every callback runs there.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fleetsched::engine {

struct BindingRequest {
  std::string podNamespace;
  std::string podName;
  std::string podUid;
  std::string node;
  std::vector<std::pair<std::string, std::string>> annotations;  // merged into the pod
};

class Binder {
 public:
  virtual ~Binder() = default;

  // POSTs the Binding (with the pod UID as precondition and the annotations merged into the
  // pod). `done(error)` runs on the reactor loop; error is empty on success, including when the
  // pod is already bound to this node.
  virtual void postBinding(BindingRequest req, std::function<void(std::string error)> done) = 0;

  // Runs `fn` on the reactor loop once the cache's other writer has finished what it is doing
  // now (its writes included): how the reactor waits for the cache writer lock without blocking.
  virtual void afterIngestTurn(std::function<void()> fn) = 0;

  // GETs the pod `podNamespace`/`podName` (names already validated) from kube-apiserver, for a
  // bind whose filter went to another replica. `done(error, body)` runs on the reactor loop after
  // readPod has returned (the caller holds the cache writer meanwhile): error empty and body the
  // Pod's JSON, or error saying why not.
  virtual void readPod(std::string podNamespace, std::string podName,
                       std::function<void(std::string error, std::string body)> done) = 0;

  // Why this replica may not bind or preempt now, or empty when it may: with leader election,
  // only the replica that holds the lease and has caught up with kube-apiserver may
  // (engine::Ingestor). The service answers such requests with this text in their Error field.
  virtual std::string bindRefusal() const { return {}; }

  // Calls `fn` on the reactor loop, from now on, with the UIDs of pods whose deletion the pod
  // watch delivered (a batch per network read), so the service forgets pods it remembered for
  // a bind that will not come. Call it on the reactor loop. A Binder without a pod watch never
  // calls `fn`.
  virtual void watchPodDeletions(std::function<void(std::vector<std::string> uids)> fn) { (void)fn; }
};

}  // namespace fleetsched::engine
