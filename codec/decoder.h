// Decoder: JSON bytes in, model structs out, with one reused simdjson On-Demand parser.
//
// Input: every decode* takes a view whose bytes are followed by at least kDecodePadding
// readable bytes (engine::kBodyPadding; use PaddedBuffer for files and tests). Bytes are
// parsed in place.
//
// Output lifetime: string_views in the results point into the input buffer, the parser's string
// buffer or the Decoder's own copies (full-Nodes memo, see reusedNodes); all stay valid until
// the next decode on the same Decoder (and the input must outlive that). Callers that keep data longer copy or intern it. Output structs
// are reset on entry and their vectors reused, so passing the same struct again avoids
// allocation.
//
// Errors: no exception escapes. A decode returns false and error()/errorMessage() tell why:
// TooLarge (input above the parser's max capacity; the HTTP layer answers 413) or Invalid
// (malformed JSON, wrong types, missing Pod, bad quantities; 400), with a short message naming
// the field, e.g. `Pod.spec.containers[0].resources.requests.cpu: invalid quantity "abc"`.
// Values the decoder skips are not validated beyond what simdjson's structural pass checks.
//
// Keys: extender envelope keys (Pod, NodeNames, ...) are matched like Go's encoding/json: the
// exact PascalCase, or any case-insensitive spelling. Keys inside Kubernetes objects are
// matched exactly (lowerCamel, as every Kubernetes client writes them). Unknown keys are
// skipped; null reads as absent. Each object is walked once in document order.
//
// Effective pod requests follow kube-scheduler's PodRequests (component-helpers/resource)
// after the apiserver's defaulting of container limits into missing requests: containers
// summed, restartable init containers (restartPolicy Always) added and carried into later init
// containers, the per-resource max with the init containers, pod-level cpu/memory/hugepages
// requests (or limits when the containers request none), plus overhead. Quantities are added
// exactly (nano-units, as ParseQuantity keeps them) and the sums rounded up once: cpu to
// milli-cores, the rest to whole units. Status-side resources (in-place resize) and DRA claims
// are not considered: a pod that is being scheduled has neither.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codec/extender.h"
#include "codec/model.h"

namespace fleetsched::codec {

constexpr size_t kDecodePadding = 64;

// JSON's insignificant whitespace (RFC 8259): what may stand between tokens.
constexpr bool isJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Default cap on one input document: a full-Nodes request for 5,000 nodes of ~12 KB fits. The
// same value as the HTTP layer's default body limit (engine::kDefaultMaxBodyBytes), which the
// extender service passes to its Decoder: one limit.
constexpr size_t kDefaultMaxDocumentBytes = 64u << 20;

enum class DecodeError : uint8_t { None, TooLarge, Invalid };

struct NodeList {
  std::string_view resourceVersion;
  std::string_view continueToken;
  std::vector<Node> items;
};

struct PodList {
  std::string_view resourceVersion;
  std::string_view continueToken;
  std::vector<Pod> items;
};

enum class WatchEventType : uint8_t { Added, Modified, Deleted, Bookmark, Error };
enum class ObjectKind : uint8_t { Pod, Node };

// metav1.Status, as carried by an ERROR watch event.
struct WatchStatus {
  std::string_view status;  // "Failure"
  std::string_view reason;  // "Expired", "Gone", ...
  std::string_view message;
  int32_t code = 0;         // 410 for an expired resource version
};

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  std::string_view kind;  // the object's "kind" when present ("Pod", "Node", "Status")
  Pod pod;                // filled when the watch is on pods (ADDED/MODIFIED/DELETED/BOOKMARK)
  Node node;              // filled when the watch is on nodes
  WatchStatus status;     // ERROR events
  // The object's metadata.resourceVersion (every event type but ERROR carries one).
  std::string_view resourceVersion;
  // BOOKMARK with annotation k8s.io/initial-events-end: "true" (end of a streaming list).
  bool initialEventsEnd = false;
};

// A coordination.k8s.io/v1 Lease: what leader election reads (client-go's LeaseLock record).
// acquireTime and renewTime stay as written (MicroTime, RFC 3339 with microseconds): the
// elector compares records, it never trusts another replica's clock.
struct Lease {
  std::string_view resourceVersion;
  std::string_view holderIdentity;
  int32_t leaseDurationSeconds = 0;
  std::string_view acquireTime;
  std::string_view renewTime;
  int32_t leaseTransitions = 0;
};

class Decoder {
 public:
  explicit Decoder(size_t maxDocumentBytes = kDefaultMaxDocumentBytes);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Extender requests (filter and prioritize share ExtenderArgs).
  bool decodeExtenderArgs(std::string_view padded, ExtenderArgs& out);
  bool decodeBindingArgs(std::string_view padded, BindingArgs& out);
  bool decodePreemptionArgs(std::string_view padded, PreemptionArgs& out);

  // Single objects, lists as `kubectl get ... -o json` writes them, and one watch event (one
  // line of a watch stream; trailing whitespace allowed). `kind` says what the watch is on.
  bool decodePod(std::string_view padded, Pod& out);
  bool decodeNode(std::string_view padded, Node& out);
  bool decodeNodeList(std::string_view padded, NodeList& out);
  bool decodePodList(std::string_view padded, PodList& out);
  bool decodeWatchEvent(std::string_view padded, ObjectKind kind, WatchEvent& out);
  bool decodeLease(std::string_view padded, Lease& out);

  // Nodes of the last decodeExtenderArgs copied from earlier requests instead of decoded: a
  // full-Nodes request whose node objects all equal (byte for byte) ones this Decoder decoded
  // before has only its envelope and pod parsed. kube-scheduler sends the same Node objects
  // cycle after cycle until a node changes. The memo holds at most about one maximal document
  // of node bytes; entries unused by the latest request are dropped beyond that.
  size_t reusedNodes() const;
  // On by default; off, every request is decoded in full and nothing is kept (tests, benchmarks).
  void setNodeMemo(bool on);

  DecodeError error() const { return error_; }
  // Empty after a successful decode.
  const std::string& errorMessage() const { return message_; }

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
  DecodeError error_ = DecodeError::None;
  std::string message_;
};

// Owns bytes plus kDecodePadding zero bytes, for tests and file loading.
class PaddedBuffer {
 public:
  PaddedBuffer() = default;
  explicit PaddedBuffer(std::string_view bytes) { assign(bytes); }
  void assign(std::string_view bytes);
  // Reads a whole file; false with `err` set when it cannot.
  bool loadFile(const std::string& path, std::string& err);
  std::string_view view() const { return {data_.data(), size_}; }

 private:
  std::string data_;
  size_t size_ = 0;
};

}  // namespace fleetsched::codec
