// The load generator's churn mode (`loadgen --churn`): per pod, what kube-scheduler does with an
// extender that binds. The pod is created on the fake kube-apiserver (tools/apiserver) the
// extender watches, with a name and UID of its own (a corpus pod's object otherwise); then
// filter with the corpus pod's node list, prioritize with the nodes filter kept (none when it
// kept one: that node is taken; none kept: the pod is unschedulable and deleted), and bind to
// the node kube-scheduler would select from the scores: the highest, ties broken at random,
// every node at 0 when the reply leaves all out. The extender reserves the node's GPUs and posts
// the Binding to the fake API server, whose pod watch then shows the pod bound, so the cache
// charges the node (GPUs, CPU, memory) for later pods; the API server deletes the pod
// `podLifetime` after its Binding, and the watch uncharges it.
//
// The connection's next pod starts once bind has answered. kube-scheduler binds in a goroutine
// while it schedules the next pod, but its own cache has assumed the pod on that node by then,
// so its in-tree filters already see the node charged; the load generator has no in-tree
// filters, and without waiting the extender would be asked about pods placed on nodes that its
// binds then refuse ("no longer fits"). Pod latency is therefore filter to bind's reply.
//
// Also the pieces of a request the static runner (loadgen.cpp) shares: verbs, heads, and the
// nodes a filter reply kept.
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tools/apiserver/fake_apiserver.h"
#include "tools/loadgen/loadgen.h"

namespace fleetsched::tools::loadgen {

enum Verb : uint8_t { kFilter = 0, kPrioritize = 1, kBind = 2 };
inline constexpr const char* kVerbNames[] = {"filter", "prioritize", "bind"};
inline constexpr size_t kMaxParts = 3;

// A request head as Go's net/http writes it for kube-scheduler's extender client.
std::string requestHead(const LoadgenOptions& o, int verb, size_t bodySize);

// The node names an ExtenderFilterResult kept (NodeNames, or Nodes.items in full mode) into
// `kept`; false when the reply is not one kube-scheduler could use.
bool parseKeptNodes(simdjson::dom::parser& parser, std::string_view reply, ArgsMode mode,
                    std::vector<std::string>& kept);

// A request as written: its head and body parts.
struct RequestParts {
  std::string_view head;
  std::array<std::string_view, kMaxParts> parts;
  size_t count = 0;
};

// A corpus pod as churn copies it: its object and the filter body's node part.
struct PodTemplate {
  std::string_view namespace_, name, uid;
  std::string_view wire;       // the v1.Pod, metadata first
  std::string_view nodesTail;  // the filter body after the pod
};

class Churn {
 public:
  enum class Step : uint8_t {
    kPrioritize,     // send prioritize next
    kBind,           // send bind next
    kUnschedulable,  // filter kept no node: the pod is done, not bound
    kBound,          // the extender bound it
    kFailed,         // a reply kube-scheduler could not use, or bind's Error: see error()
  };

  Churn(const LoadgenOptions& o, apiserver::FakeApiServer& api);

  // A new pod from `t`, created on the API server; returns its slot.
  uint32_t start(const PodTemplate& t);
  // The request of `verb` for the pod in `slot`.
  RequestParts request(uint32_t slot, Verb verb) const;
  // The reply to the pod's `verb` (status 200): what comes next.
  Step onReply(uint32_t slot, Verb verb, std::string_view reply);
  const std::string& error(uint32_t slot) const { return slots_[slot].error; }
  // The pod is done; one that did not bind is deleted from the API server (it gave up).
  void release(uint32_t slot, bool bound);

 private:
  struct Slot {
    std::string namespace_, name, uid, wire;
    std::string_view nodesTail;
    std::string filterHead, prioritizeHead, prioritizeTail, bindHead, bindBody;
    std::vector<std::string> kept;
    std::string error;
  };
  Step bindTo(Slot& s, const std::string& node);
  Step choose(Slot& s, std::string_view reply);

  const LoadgenOptions& o_;
  apiserver::FakeApiServer& api_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  uint64_t seq_ = 0;
  uint32_t nonce_;
  std::mt19937_64 rng_;
  simdjson::dom::parser parser_;
};

// Polls the target's /readyz until it answers 200 (true) or `seconds` pass (false).
bool waitReady(const std::string& target, double seconds);

}  // namespace fleetsched::tools::loadgen
