// Private to codec/decoder*.cpp: the decoding state (Decoder::Impl) with its error path and
// primitive readers, and the helpers the decoder's files share. Not part of codec's interface:
// include codec/decoder.h instead.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "codec/decoder.h"
#include "codec/quantity.h"

namespace fleetsched::codec {

namespace sj = simdjson::ondemand;
using simdjson::error_code;

static_assert(kDecodePadding >= simdjson::SIMDJSON_PADDING, "callers' padding must satisfy simdjson");
static_assert(std::endian::native == std::endian::little, "the word-at-a-time string scan reads bytes in order");

// Finds the first '"' or '\\' at or after p, 8 bytes at a time (SWAR). The input is padded
// (kDecodePadding), so reading a word past the string's end stays inside the buffer.
inline const char* findQuoteOrBackslash(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  for (;; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    uint64_t q = w ^ (kOnes * '"');
    uint64_t b = w ^ (kOnes * '\\');
    // The lowest flagged byte is exact (false positives only appear above a true match).
    uint64_t m = ((q - kOnes) & ~q & kHigh) | ((b - kOnes) & ~b & kHigh);
    if (m != 0) return p + (__builtin_ctzll(m) >> 3);
  }
}

// The text between the quotes starting at p (just after the opening quote); `escaped` is set
// when it contains a backslash, in which case the view is the raw, still-escaped text.
inline std::string_view rawString(const char* p, bool& escaped) {
  const char* q = findQuoteOrBackslash(p);
  escaped = false;
  if (*q == '"') return {p, static_cast<size_t>(q - p)};
  escaped = true;
  while (*q != '"') {
    if (*q == '\\') ++q;
    ++q;
  }
  return {p, static_cast<size_t>(q - p)};
}

// A key as it appears in the input (between the quotes, escapes not processed).
inline std::string_view rawKey(const sj::raw_json_string& k, bool& escaped) {
  return rawString(k.raw(), escaped);
}

inline char lowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// Go's encoding/json key matching for struct fields: exact, else case-insensitive with
// Unicode simple folding. Our field names are ASCII, so the only non-ASCII spellings that fold
// onto them are KELVIN SIGN (k) and LATIN SMALL LETTER LONG S (s).
inline bool foldEquals(std::string_view in, std::string_view name) {
  if (in == name) return true;
  size_t i = 0, j = 0;
  while (i < in.size() && j < name.size()) {
    char want = lowerAscii(name[j]);
    unsigned char c = static_cast<unsigned char>(in[i]);
    if (c < 0x80) {
      if (lowerAscii(in[i]) != want) return false;
      ++i;
    } else if (want == 's' && in.substr(i, 2) == "\xC5\xBF") {
      i += 2;
    } else if (want == 'k' && in.substr(i, 3) == "\xE2\x84\xAA") {
      i += 3;
    } else {
      return false;
    }
    ++j;
  }
  return i == in.size() && j == name.size();
}

inline bool isHugePages(std::string_view r) { return r.substr(0, 10) == "hugepages-"; }

// A small resource-name → amount list with presence, used while folding containers together.
// Amounts are exact nano-units: kube-scheduler adds Quantity values and rounds only when it
// reads the sum (MilliValue for cpu, Value for the rest).
struct ResAmount {
  std::string_view name;
  Nano128 nano = 0;
};

struct ResList {
  std::vector<ResAmount> items;
  void clear() { items.clear(); }
  ResAmount* find(std::string_view name) {
    for (auto& r : items) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }
  void set(std::string_view name, Nano128 v) {
    if (auto* r = find(name)) {
      r->nano = v;
    } else {
      items.push_back({name, v});
    }
  }
  void add(const ResList& o) {
    for (const auto& r : o.items) {
      if (auto* x = find(r.name)) {
        x->nano += r.nano;
      } else {
        items.push_back(r);
      }
    }
  }
  void max(const ResList& o) {
    for (const auto& r : o.items) {
      if (auto* x = find(r.name)) {
        x->nano = std::max(x->nano, r.nano);
      } else {
        items.push_back(r);
      }
    }
  }
};

inline void resetResources(Resources& r) {
  r.milliCpu = r.memory = r.ephemeralStorage = r.pods = 0;
  r.scalar.clear();
}

inline void resetPod(Pod& p) {
  p.name = p.namespace_ = p.uid = p.resourceVersion = {};
  p.labels.clear();
  p.annotations.clear();
  p.ownerReferences.clear();
  p.terminating = false;
  p.nodeName = p.schedulerName = {};
  p.priority = 0;
  p.nodeSelector.clear();
  p.requiredNodeAffinity.clear();
  p.preferredNodeAffinity.clear();
  p.tolerations.clear();
  p.phase = PodPhase::Unknown;
  p.nominatedNodeName = {};
  resetResources(p.requests);
}

inline void resetNode(Node& n) {
  n.name = n.uid = n.resourceVersion = {};
  n.labels.clear();
  n.annotations.clear();
  n.unschedulable = false;
  n.taints.clear();
  resetResources(n.capacity);
  resetResources(n.allocatable);
  n.raw = {};
}

// Hands out reused elements of a vector of structs: slot i is reset, not reallocated.
template <typename T, typename Reset>
T& nextSlot(std::vector<T>& v, size_t& used, Reset reset) {
  if (used == v.size()) v.emplace_back();
  T& t = v[used++];
  reset(t);
  return t;
}

// The decoding state: the parser, the current document, scratch lists and the error path.
class Decoder::Impl {
 public:
  explicit Impl(size_t maxBytes) : parser_(maxBytes) {}

  sj::parser parser_;
  sj::document doc_;
  const char* docEnd_ = nullptr;

  // Error: `what_` describes the problem, `path_` is built from the leaf outwards as the
  // failure unwinds ("containers[0].resources.requests.cpu").
  DecodeError kind_ = DecodeError::None;
  std::string path_;
  std::string what_;

  // Per-pod scratch for effective requests.
  ResList ctrReq_, ctrLim_, sum_, restartable_, initMax_, cur_, podReq_, podLim_, overhead_;
  bool sawPodResources_ = false;

  // ---- full-Nodes memo (see decodeExtenderArgs) ---------------------------------------------
  // A node object seen in an earlier request, with its decoded form. Views in `node` point into
  // `raw` (strings without escapes) or `arena` (escaped strings, unescaped), never into a
  // request, so the entry outlives the request it came from.
  struct MemoNode {
    std::string raw;
    std::string arena;
    Node node;
    uint64_t lastUse = 0;
  };
  // Nodes shorter than this are decoded every time (cheap anyway); longer ones are indexed by
  // a hash of their first kMemoPrefix bytes.
  static constexpr size_t kMemoPrefix = 256;
  std::vector<std::unique_ptr<MemoNode>> memo_;
  std::unordered_multimap<uint64_t, uint32_t> memoIndex_;
  size_t memoBytes_ = 0;
  uint64_t memoUse_ = 0;
  size_t reused_ = 0;
  bool memoOn_ = true;
  // Where the (last) Nodes.items array started in the input of the last decode; SIZE_MAX if none.
  size_t itemsOffset_ = SIZE_MAX;
  std::string compact_;
  std::vector<const MemoNode*> hits_;
  std::vector<size_t> hitAt_;

  // ---- full-Nodes echo check ----------------------------------------------------------------
  // On-Demand skips the fields it is not asked for (managedFields, images, conditions...)
  // counting brackets only, so garbage inside them went unnoticed, and full-Nodes replies echo
  // each node's bytes: a node is accepted only when its bytes are valid JSON as a whole. Runs
  // once per distinct node (memo hits are byte-equal to a node checked before).
  simdjson::dom::parser validator_;
  bool validNodeBytes(std::string_view raw) {
    if (raw.empty()) return true;  // null: echoed as null
    // `raw` lies inside the padded request, so the padding simdjson reads past its end exists.
    simdjson::error_code e =
        validator_.parse(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), false).error();
    if (e == simdjson::SUCCESS) return true;
    if (e == simdjson::CAPACITY || e == simdjson::MEMALLOC) return failJson(e);
    return fail(std::string("invalid JSON inside the node object (") + simdjson::error_message(e) + ")");
  }

  // ---- error helpers (cold) -------------------------------------------------------------
  bool fail(std::string what) {
    kind_ = DecodeError::Invalid;
    what_ = std::move(what);
    path_.clear();
    return false;
  }
  bool failJson(error_code e) {
    kind_ = e == simdjson::CAPACITY ? DecodeError::TooLarge : DecodeError::Invalid;
    what_ = simdjson::error_message(e);
    path_.clear();
    return false;
  }
  bool failType(error_code e, const char* expected) {
    if (e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_OUT_OF_RANGE) {
      return fail(e == simdjson::INCORRECT_TYPE ? std::string("expected ") + expected
                                                : std::string("number out of range"));
    }
    return failJson(e);
  }
  // Prepends one path segment; returns false so callers can `return at("spec")`.
  bool at(std::string_view segment) {
    if (path_.empty()) {
      path_.assign(segment);
    } else if (path_[0] == '[') {
      path_.insert(0, segment);
    } else {
      path_.insert(0, 1, '.');
      path_.insert(0, segment);
    }
    return false;
  }
  bool atIndex(size_t i) {
    char buf[24];
    int n = std::snprintf(buf, sizeof buf, "[%zu]", i);
    return at(std::string_view(buf, static_cast<size_t>(n)));
  }

  // Whether [a, b) holds a backslash. Strings are read in document order, so one forward
  // memchr finds the next backslash for every string up to it: O(1) per string, and the
  // document is scanned at most once.
  const char* nextBackslash_ = nullptr;
  const char* lastString_ = nullptr;  // debug check of the ordering
  bool hasBackslash(const char* a, const char* b) {
    assert(a >= lastString_ && "strings must be read in document order");
    lastString_ = a;
    if (nextBackslash_ < a) {
      const void* hit = std::memchr(a, '\\', static_cast<size_t>(docEnd_ - a));
      nextBackslash_ = hit ? static_cast<const char*>(hit) : docEnd_;
    }
    return nextBackslash_ < b;
  }

  // ---- primitive readers: null reads as absent --------------------------------------------
  // Returns 1 when v is null (consumed), 0 when not, -1 on error.
  int isNull(sj::value& v) {
    bool n = false;
    if (auto e = v.is_null().get(n)) {
      failJson(e);
      return -1;
    }
    return n ? 1 : 0;
  }
  bool str(sj::value& v, std::string_view& out) {
    // Strings without escapes are used in place (no copy into the string buffer); the value
    // is then consumed as a raw string.
    // The token runs from the opening quote to the next structural character, so the closing
    // quote is its last non-blank byte and only a backslash needs looking for.
    std::string_view tok = v.raw_json_token();
    if (!tok.empty() && tok[0] == '"') {
      size_t end = tok.size();
      while (end > 1 && (tok[end - 1] == ' ' || tok[end - 1] == '\n' || tok[end - 1] == '\r' || tok[end - 1] == '\t')) {
        --end;
      }
      if (end >= 2 && tok[end - 1] == '"' && !hasBackslash(tok.data() + 1, tok.data() + end - 1)) {
        sj::raw_json_string unused;
        if (auto e = v.get_raw_json_string().get(unused)) return failType(e, "string");
        out = std::string_view(tok.data() + 1, end - 2);
        return true;
      }
      if (auto e = v.get_string().get(out)) return failType(e, "string");
      return true;
    }
    int n = isNull(v);
    if (n < 0) return false;
    out = {};
    if (n == 1) return true;
    if (auto e = v.get_string().get(out)) return failType(e, "string");
    return true;
  }
  bool i64(sj::value& v, int64_t& out) {
    int n = isNull(v);
    if (n < 0) return false;
    if (n == 1) return true;
    if (auto e = v.get_int64().get(out)) return failType(e, "integer");
    return true;
  }
  bool i32(sj::value& v, int32_t& out) {
    int64_t x = out;
    if (!i64(v, x)) return false;
    if (x < INT32_MIN || x > INT32_MAX) return fail("number out of range");
    out = static_cast<int32_t>(x);
    return true;
  }
  bool boolean(sj::value& v, bool& out) {
    int n = isNull(v);
    if (n < 0) return false;
    if (n == 1) return true;
    if (auto e = v.get_bool().get(out)) return failType(e, "boolean");
    return true;
  }
  // Opens an object; `present` is false for null.
  bool object(sj::value& v, sj::object& out, bool& present) {
    int n = isNull(v);
    if (n < 0) return false;
    present = n == 0;
    if (!present) return true;
    if (auto e = v.get_object().get(out)) return failType(e, "object");
    return true;
  }
  bool array(sj::value& v, sj::array& out, bool& present) {
    int n = isNull(v);
    if (n < 0) return false;
    present = n == 0;
    if (!present) return true;
    if (auto e = v.get_array().get(out)) return failType(e, "array");
    return true;
  }
  // The key of `f` as text: the raw bytes, or unescaped when it has escapes.
  bool key(sj::field& f, std::string_view& out) {
    // The value's first byte is known (its structural index), so the closing quote is found by
    // stepping back over ':' and blanks instead of scanning the key: labels and annotations are
    // most of a node's fields, with keys of 20-60 bytes.
    const char* start = f.key().raw();
    const char* e = f.value().raw_json_token().data() - 1;
    while (isJsonSpace(*e)) --e;
    if (*e == ':') {
      --e;
      while (isJsonSpace(*e)) --e;
    }
    if (*e == '"' && e >= start && !hasBackslash(start, e)) {
      out = std::string_view(start, static_cast<size_t>(e - start));
      return true;
    }
    bool escaped = false;
    out = rawKey(f.key(), escaped);
    if (escaped) {
      if (auto e = f.unescaped_key().get(out)) return failJson(e);
    }
    return true;
  }

  // Iterates an object's fields, calling fn(key, value) -> bool. Null objects are empty.
  template <typename Fn>
  bool fields(sj::value& v, Fn&& fn) {
    sj::object obj;
    bool present = false;
    if (!object(v, obj, present)) return false;
    if (!present) return true;
    return objectFields(obj, fn);
  }
  template <typename Fn>
  bool objectFields(sj::object& obj, Fn&& fn) {
    // The field and the element are used where the iterator built them: moving them out with
    // get() copies a value_iterator whose halves were just stored separately, and the 16-byte
    // reload of those two stores stalls on store forwarding, once per field.
    for (auto fr : obj) {
      if (auto e = fr.error()) return failJson(e);
      sj::field& f = fr.value_unsafe();
      std::string_view k;
      if (!key(f, k)) return false;
      if (!fn(k, f.value())) return false;
    }
    return true;
  }
  // Iterates an array's elements, calling fn(index, value) -> bool. Null arrays are empty.
  template <typename Fn>
  bool elements(sj::value& v, Fn&& fn) {
    sj::array arr;
    bool present = false;
    if (!array(v, arr, present)) return false;
    if (!present) return true;
    size_t i = 0;
    for (auto er : arr) {
      if (auto e = er.error()) return failJson(e);
      sj::value& el = er.value_unsafe();
      if (!fn(i, el)) return atIndex(i);
      ++i;
    }
    return true;
  }

  bool stringMap(sj::value& v, std::vector<KeyValue>& out) {
    out.clear();
    return fields(v, [&](std::string_view k, sj::value& val) {
      std::string_view s;
      if (!str(val, s)) return at(k);
      out.push_back({k, s});
      return true;
    });
  }
  bool stringList(sj::value& v, std::vector<std::string_view>& out) {
    out.clear();
    return elements(v, [&](size_t, sj::value& el) {
      std::string_view s;
      if (!str(el, s)) return false;
      out.push_back(s);
      return true;
    });
  }

  // ---- quantities and resources (defined in decoder_objects.cpp) ---------------------------
  bool toResources(const ResList& l, Resources& out);
  bool resourcesDirect(sj::value& v, Resources& out);
  static ResourceAmount* findScalar(Resources& r, std::string_view name);
  bool failQuantity(QuantityError qe, std::string_view s);
  bool quantityMap(sj::value& v, ResList& out);

  // ---- Kubernetes objects (defined in decoder_objects.cpp) ----------------------------------
  // Where meta() stores what it reads; null fields are skipped.
  struct MetaOut {
    std::string_view* name = nullptr;
    std::string_view* namespace_ = nullptr;
    std::string_view* uid = nullptr;
    std::string_view* resourceVersion = nullptr;
    std::vector<KeyValue>* labels = nullptr;
    std::vector<KeyValue>* annotations = nullptr;
    std::vector<OwnerReference>* owners = nullptr;
    bool* terminating = nullptr;
  };

  bool meta(sj::value& v, const MetaOut& m);
  bool ownerRefs(sj::value& v, std::vector<OwnerReference>& out);
  bool selectorRequirements(sj::value& v, std::vector<NodeSelectorRequirement>& out);
  bool selectorTerm(sj::value& v, NodeSelectorTerm& t);
  bool nodeAffinity(sj::value& v, Pod& p);
  bool taintEffect(std::string_view s, TaintEffect& out, bool allowEmpty);
  bool tolerations(sj::value& v, std::vector<Toleration>& out);
  bool taints(sj::value& v, std::vector<Taint>& out);
  bool resourceRequirements(sj::value& v, ResList& req, ResList& lim);
  static void defaultRequests(ResList& req, const ResList& lim);
  bool container(sj::value& v, bool& sidecar);
  bool podSpec(sj::value& v, Pod& p);
  bool podStatus(sj::value& v, Pod& p);
  // A pod's request sums: beginPod() before its fields, finishPod() after (PodRequests' last
  // steps, then the rounding into p.requests).
  void beginPod();
  bool finishPod(Pod& p);
  // A Pod object (null reads as an empty pod).
  bool pod(sj::value& v, Pod& p);
  bool pod(sj::object& obj, Pod& p);
  bool nodeSpec(sj::value& v, Node& n);
  bool nodeStatus(sj::value& v, Node& n);
  // A Node object, keeping its exact bytes in n.raw (null reads as an empty node).
  bool node(sj::value& v, Node& n);
  bool node(sj::object& obj, Node& n, const char* start);
  // The bytes from `start` (an object's opening brace) to where the iterator stands.
  std::string_view rawUntilHere(const char* start);

  // ---- documents ------------------------------------------------------------------------
  // Starts a document whose root must be an object. (The root is opened as an object, not a
  // value: simdjson's value readers are for values below the root.)
  bool begin(std::string_view padded, sj::object& root) {
    kind_ = DecodeError::None;
    path_.clear();
    what_.clear();
    docEnd_ = padded.data() + padded.size();
    nextBackslash_ = nullptr;
    lastString_ = nullptr;
    if (padded.size() > parser_.max_capacity()) return failJson(simdjson::CAPACITY);
    auto e0 = parser_.iterate(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING).get(doc_);
    if (e0) return failJson(e0);
    sj::json_type t;
    if (auto e = doc_.type().get(t)) return failJson(e);
    if (t != sj::json_type::object) return fail("expected a JSON object");
    if (auto e = doc_.get_object().get(root)) return failJson(e);
    return true;
  }
  // Where the root object starts (for Node::raw of a whole-document node).
  static const char* firstByte(std::string_view padded) {
    size_t i = 0;
    while (i < padded.size() && (padded[i] == ' ' || padded[i] == '\n' || padded[i] == '\r' || padded[i] == '\t')) ++i;
    return padded.data() + i;
  }
  // After the root object: nothing but whitespace may follow.
  bool end() {
    const char* loc = nullptr;
    if (doc_.current_location().get(loc) == simdjson::SUCCESS) return fail("unexpected data after the JSON value");
    return true;
  }
};

// Collects the result of one decode into the Decoder's public error fields.
struct Finish {
  bool operator()(bool ok, Decoder::Impl& impl, DecodeError& err, std::string& msg) const {
    if (ok) {
      err = DecodeError::None;
      msg.clear();
      return true;
    }
    err = impl.kind_ == DecodeError::None ? DecodeError::Invalid : impl.kind_;
    msg = impl.path_;
    if (!msg.empty()) msg += ": ";
    msg += impl.what_;
    return false;
  }
};

}  // namespace fleetsched::codec
