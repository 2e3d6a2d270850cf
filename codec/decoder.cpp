#include "codec/decoder.h"

#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "codec/quantity.h"

namespace fleetsched::codec {

namespace sj = simdjson::ondemand;
using simdjson::error_code;

static_assert(kDecodePadding >= simdjson::SIMDJSON_PADDING, "callers' padding must satisfy simdjson");
static_assert(std::endian::native == std::endian::little, "the word-at-a-time string scan reads bytes in order");

namespace {

// Finds the first '"' or '\\' at or after p, 8 bytes at a time (SWAR). The input is padded
// (kDecodePadding), so reading a word past the string's end stays inside the buffer.
const char* findQuoteOrBackslash(const char* p) {
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
std::string_view rawString(const char* p, bool& escaped) {
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
std::string_view rawKey(const sj::raw_json_string& k, bool& escaped) { return rawString(k.raw(), escaped); }

char lowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// Go's encoding/json key matching for struct fields: exact, else case-insensitive with
// Unicode simple folding. Our field names are ASCII, so the only non-ASCII spellings that fold
// onto them are KELVIN SIGN (k) and LATIN SMALL LETTER LONG S (s).
bool foldEquals(std::string_view in, std::string_view name) {
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

bool isHugePages(std::string_view r) { return r.substr(0, 10) == "hugepages-"; }

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

void resetResources(Resources& r) {
  r.milliCpu = r.memory = r.ephemeralStorage = r.pods = 0;
  r.scalar.clear();
}

void resetPod(Pod& p) {
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

void resetNode(Node& n) {
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

}  // namespace

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

  // Rounds a list into model Resources: cpu to milli-cores, the rest to whole units.
  bool toResources(const ResList& l, Resources& out) {
    for (const auto& r : l.items) {
      int64_t v = 0;
      if (nanoToScaled(r.nano, r.name == "cpu" ? 3 : 0, v) != QuantityError::None) {
        return fail("quantity out of range") || at(r.name);
      }
      if (r.name == "cpu") {
        out.milliCpu = v;
      } else if (r.name == "memory") {
        out.memory = v;
      } else if (r.name == "ephemeral-storage") {
        out.ephemeralStorage = v;
      } else if (r.name == "pods") {
        out.pods = v;
      } else {
        out.scalar.push_back({r.name, v});
      }
    }
    return true;
  }

  // A node's ResourceList straight into Resources (no sums, so no wide arithmetic).
  bool resourcesDirect(sj::value& v, Resources& out) {
    resetResources(out);
    return fields(v, [&](std::string_view k, sj::value& val) {
      std::string_view s;
      if (!str(val, s)) return at(k);
      int64_t amount = 0;
      QuantityError qe = k == "cpu" ? parseQuantityMilli(s, amount) : parseQuantityValue(s, amount);
      if (qe != QuantityError::None) return failQuantity(qe, s) || at(k);
      if (k == "cpu") {
        out.milliCpu = amount;
      } else if (k == "memory") {
        out.memory = amount;
      } else if (k == "ephemeral-storage") {
        out.ephemeralStorage = amount;
      } else if (k == "pods") {
        out.pods = amount;
      } else if (ResourceAmount* r = findScalar(out, k)) {
        r->value = amount;  // a repeated key: the last one wins, as in Go
      } else {
        out.scalar.push_back({k, amount});
      }
      return true;
    });
  }
  static ResourceAmount* findScalar(Resources& r, std::string_view name) {
    for (auto& x : r.scalar) {
      if (x.name == name) return &x;
    }
    return nullptr;
  }
  bool failQuantity(QuantityError qe, std::string_view s) {
    std::string what(quantityErrorText(qe));
    what += " \"";
    what.append(s.substr(0, 64));
    what += '"';
    return fail(std::move(what));
  }

  // A ResourceList, in exact nano-units.
  bool quantityMap(sj::value& v, ResList& out) {
    out.clear();
    return fields(v, [&](std::string_view k, sj::value& val) {
      std::string_view s;
      if (!str(val, s)) return at(k);
      Nano128 amount = 0;
      QuantityError qe = parseQuantityNano(s, amount);
      // Values the int64 readers cannot represent are errors here too.
      int64_t check = 0;
      if (qe == QuantityError::None) qe = nanoToScaled(amount, k == "cpu" ? 3 : 0, check);
      if (qe != QuantityError::None) return failQuantity(qe, s) || at(k);
      out.set(k, amount);
      return true;
    });
  }

  // ---- Kubernetes objects -------------------------------------------------------------------
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

  bool meta(sj::value& v, const MetaOut& m) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "name") {
        ok = str(val, *m.name);
      } else if (k == "namespace" && m.namespace_) {
        ok = str(val, *m.namespace_);
      } else if (k == "uid") {
        ok = str(val, *m.uid);
      } else if (k == "resourceVersion") {
        ok = str(val, *m.resourceVersion);
      } else if (k == "labels") {
        ok = stringMap(val, *m.labels);
      } else if (k == "annotations") {
        ok = stringMap(val, *m.annotations);
      } else if (k == "ownerReferences" && m.owners) {
        ok = ownerRefs(val, *m.owners);
      } else if (k == "deletionTimestamp" && m.terminating) {
        int n = isNull(val);
        if (n < 0) return at(k);
        if (n == 0) {
          std::string_view ts;
          ok = str(val, ts);
          *m.terminating = true;
        }
      }
      return ok || at(k);
    });
  }

  bool ownerRefs(sj::value& v, std::vector<OwnerReference>& out) {
    out.clear();
    return elements(v, [&](size_t, sj::value& el) {
      OwnerReference o;
      bool ok = fields(el, [&](std::string_view k, sj::value& val) {
        bool r = true;
        if (k == "apiVersion") r = str(val, o.apiVersion);
        else if (k == "kind") r = str(val, o.kind);
        else if (k == "name") r = str(val, o.name);
        else if (k == "uid") r = str(val, o.uid);
        else if (k == "controller") r = boolean(val, o.controller);
        return r || at(k);
      });
      out.push_back(o);
      return ok;
    });
  }

  bool selectorRequirements(sj::value& v, std::vector<NodeSelectorRequirement>& out) {
    out.clear();
    return elements(v, [&](size_t, sj::value& el) {
      NodeSelectorRequirement& r = out.emplace_back();
      return fields(el, [&](std::string_view k, sj::value& val) {
        bool ok = true;
        if (k == "key") {
          ok = str(val, r.key);
        } else if (k == "operator") {
          std::string_view op;
          ok = str(val, op);
          if (ok) {
            if (op == "In") r.op = SelectorOp::In;
            else if (op == "NotIn") r.op = SelectorOp::NotIn;
            else if (op == "Exists") r.op = SelectorOp::Exists;
            else if (op == "DoesNotExist") r.op = SelectorOp::DoesNotExist;
            else if (op == "Gt") r.op = SelectorOp::Gt;
            else if (op == "Lt") r.op = SelectorOp::Lt;
            else ok = fail("unknown operator \"" + std::string(op.substr(0, 32)) + "\"");
          }
        } else if (k == "values") {
          ok = stringList(val, r.values);
        }
        return ok || at(k);
      });
    });
  }

  bool selectorTerm(sj::value& v, NodeSelectorTerm& t) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "matchExpressions") ok = selectorRequirements(val, t.matchExpressions);
      else if (k == "matchFields") ok = selectorRequirements(val, t.matchFields);
      return ok || at(k);
    });
  }

  bool nodeAffinity(sj::value& v, Pod& p) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
        p.requiredNodeAffinity.clear();
        ok = fields(val, [&](std::string_view k2, sj::value& v2) {
          if (k2 != "nodeSelectorTerms") return true;
          return elements(v2, [&](size_t, sj::value& el) {
            return selectorTerm(el, p.requiredNodeAffinity.emplace_back());
          }) || at(k2);
        });
      } else if (k == "preferredDuringSchedulingIgnoredDuringExecution") {
        p.preferredNodeAffinity.clear();
        ok = elements(val, [&](size_t, sj::value& el) {
          PreferredSchedulingTerm& t = p.preferredNodeAffinity.emplace_back();
          return fields(el, [&](std::string_view k2, sj::value& v2) {
            bool r = true;
            if (k2 == "weight") r = i32(v2, t.weight);
            else if (k2 == "preference") r = selectorTerm(v2, t.preference);
            return r || at(k2);
          });
        });
      }
      return ok || at(k);
    });
  }

  bool taintEffect(std::string_view s, TaintEffect& out, bool allowEmpty) {
    if (s == "NoSchedule") out = TaintEffect::NoSchedule;
    else if (s == "PreferNoSchedule") out = TaintEffect::PreferNoSchedule;
    else if (s == "NoExecute") out = TaintEffect::NoExecute;
    else if (s.empty() && allowEmpty) out = TaintEffect::None;
    else return fail("unknown taint effect \"" + std::string(s.substr(0, 32)) + "\"");
    return true;
  }

  bool tolerations(sj::value& v, std::vector<Toleration>& out) {
    out.clear();
    return elements(v, [&](size_t, sj::value& el) {
      Toleration& t = out.emplace_back();
      return fields(el, [&](std::string_view k, sj::value& val) {
        bool ok = true;
        std::string_view s;
        if (k == "key") {
          ok = str(val, t.key);
        } else if (k == "operator") {
          ok = str(val, s);
          if (ok) {
            if (s == "Exists") t.opExists = true;
            else if (s == "Equal" || s.empty()) t.opExists = false;
            else ok = fail("unknown toleration operator \"" + std::string(s.substr(0, 32)) + "\"");
          }
        } else if (k == "value") {
          ok = str(val, t.value);
        } else if (k == "effect") {
          ok = str(val, s) && taintEffect(s, t.effect, true);
        }
        return ok || at(k);
      });
    });
  }

  bool taints(sj::value& v, std::vector<Taint>& out) {
    out.clear();
    return elements(v, [&](size_t, sj::value& el) {
      Taint& t = out.emplace_back();
      return fields(el, [&](std::string_view k, sj::value& val) {
        bool ok = true;
        std::string_view s;
        if (k == "key") ok = str(val, t.key);
        else if (k == "value") ok = str(val, t.value);
        else if (k == "effect") ok = str(val, s) && taintEffect(s, t.effect, false);
        return ok || at(k);
      });
    });
  }

  // resources: {limits, requests}; limits fill in missing requests (apiserver defaulting).
  bool resourceRequirements(sj::value& v, ResList& req, ResList& lim) {
    req.clear();
    lim.clear();
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "requests") ok = quantityMap(val, req);
      else if (k == "limits") ok = quantityMap(val, lim);
      return ok || at(k);
    });
  }

  static void defaultRequests(ResList& req, const ResList& lim) {
    for (const auto& l : lim.items) {
      if (!req.find(l.name)) req.items.push_back(l);
    }
  }

  // One container: its requests (limits defaulted in) are left in ctrReq_; `sidecar` tells
  // whether it is a restartable init container.
  bool container(sj::value& v, bool& sidecar) {
    sidecar = false;
    ctrReq_.clear();
    ctrLim_.clear();
    bool ok = fields(v, [&](std::string_view k, sj::value& val) {
      bool r = true;
      if (k == "resources") {
        r = resourceRequirements(val, ctrReq_, ctrLim_);
      } else if (k == "restartPolicy") {
        std::string_view s;
        r = str(val, s);
        sidecar = s == "Always";
      }
      return r || at(k);
    });
    if (ok) defaultRequests(ctrReq_, ctrLim_);
    return ok;
  }

  bool podSpec(sj::value& v, Pod& p) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "containers") {
        ok = elements(val, [&](size_t, sj::value& el) {
          bool sidecar = false;
          if (!container(el, sidecar)) return false;
          sum_.add(ctrReq_);
          return true;
        });
      } else if (k == "initContainers") {
        ok = elements(val, [&](size_t, sj::value& el) {
          bool sidecar = false;
          if (!container(el, sidecar)) return false;
          if (sidecar) {
            sum_.add(ctrReq_);
            restartable_.add(ctrReq_);
            initMax_.max(restartable_);
          } else {
            cur_.clear();
            cur_.add(ctrReq_);
            cur_.add(restartable_);
            initMax_.max(cur_);
          }
          return true;
        });
      } else if (k == "nodeName") {
        ok = str(val, p.nodeName);
      } else if (k == "schedulerName") {
        ok = str(val, p.schedulerName);
      } else if (k == "priority") {
        ok = i32(val, p.priority);
      } else if (k == "nodeSelector") {
        ok = stringMap(val, p.nodeSelector);
      } else if (k == "affinity") {
        ok = fields(val, [&](std::string_view k2, sj::value& v2) {
          return k2 != "nodeAffinity" || nodeAffinity(v2, p) || at(k2);
        });
      } else if (k == "tolerations") {
        ok = tolerations(val, p.tolerations);
      } else if (k == "overhead") {
        ok = quantityMap(val, overhead_);
      } else if (k == "resources") {
        sawPodResources_ = true;
        ok = resourceRequirements(val, podReq_, podLim_);
      }
      return ok || at(k);
    });
  }

  bool podStatus(sj::value& v, Pod& p) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "phase") {
        std::string_view s;
        ok = str(val, s);
        if (s == "Pending") p.phase = PodPhase::Pending;
        else if (s == "Running") p.phase = PodPhase::Running;
        else if (s == "Succeeded") p.phase = PodPhase::Succeeded;
        else if (s == "Failed") p.phase = PodPhase::Failed;
        else p.phase = PodPhase::Unknown;
      } else if (k == "nominatedNodeName") {
        ok = str(val, p.nominatedNodeName);
      }
      return ok || at(k);
    });
  }

  void beginPod() {
    sum_.clear();
    restartable_.clear();
    initMax_.clear();
    podReq_.clear();
    podLim_.clear();
    overhead_.clear();
    sawPodResources_ = false;
  }

  // PodRequests' final steps: max with init containers, pod-level resources, overhead.
  bool finishPod(Pod& p) {
    sum_.max(initMax_);
    if (sawPodResources_) {
      auto supported = [](std::string_view r) { return r == "cpu" || r == "memory" || isHugePages(r); };
      for (const auto& r : podReq_.items) {
        if (supported(r.name)) sum_.set(r.name, r.nano);
      }
      // Pod-level limits without a pod-level request (apiserver defaulting): cpu and memory
      // default to the containers' aggregate when they request it, else to the limit.
      for (const auto& l : podLim_.items) {
        if (!supported(l.name) || podReq_.find(l.name)) continue;
        bool overcommittable = !isHugePages(l.name);
        if (overcommittable && sum_.find(l.name)) continue;
        sum_.set(l.name, l.nano);
      }
    }
    sum_.add(overhead_);
    return toResources(sum_, p.requests) || at("requests");
  }

  // A Pod object (null reads as an empty pod).
  bool pod(sj::value& v, Pod& p) {
    sj::object obj;
    bool present = false;
    if (!object(v, obj, present)) return false;
    if (!present) {
      resetPod(p);
      return true;
    }
    return pod(obj, p);
  }
  bool pod(sj::object& obj, Pod& p) {
    resetPod(p);
    beginPod();
    MetaOut m{&p.name, &p.namespace_, &p.uid, &p.resourceVersion, &p.labels, &p.annotations,
              &p.ownerReferences, &p.terminating};
    bool ok = objectFields(obj, [&](std::string_view k, sj::value& val) {
      bool r = true;
      if (k == "metadata") r = meta(val, m);
      else if (k == "spec") r = podSpec(val, p);
      else if (k == "status") r = podStatus(val, p);
      return r || at(k);
    });
    return ok && finishPod(p);
  }

  bool nodeSpec(sj::value& v, Node& n) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "unschedulable") ok = boolean(val, n.unschedulable);
      else if (k == "taints") ok = taints(val, n.taints);
      return ok || at(k);
    });
  }

  bool nodeStatus(sj::value& v, Node& n) {
    return fields(v, [&](std::string_view k, sj::value& val) {
      bool ok = true;
      if (k == "capacity") {
        ok = resourcesDirect(val, n.capacity);
      } else if (k == "allocatable") {
        ok = resourcesDirect(val, n.allocatable);
      }
      return ok || at(k);
    });
  }

  // A Node object, keeping its exact bytes in n.raw (null reads as an empty node).
  bool node(sj::value& v, Node& n) {
    const char* start = v.raw_json_token().data();
    sj::object obj;
    bool present = false;
    if (!object(v, obj, present)) return false;
    if (!present) {
      resetNode(n);
      return true;
    }
    return node(obj, n, start);
  }
  bool node(sj::object& obj, Node& n, const char* start) {
    resetNode(n);
    MetaOut m{&n.name, nullptr, &n.uid, &n.resourceVersion, &n.labels, &n.annotations, nullptr, nullptr};
    bool ok = objectFields(obj, [&](std::string_view k, sj::value& val) {
      bool r = true;
      if (k == "metadata") r = meta(val, m);
      else if (k == "spec") r = nodeSpec(val, n);
      else if (k == "status") r = nodeStatus(val, n);
      return r || at(k);
    });
    if (!ok) return false;
    n.raw = rawUntilHere(start);
    return true;
  }

  // The bytes from `start` (an object's opening brace) to the iterator's position, which sits
  // on the token after the object's closing brace (or at the end of the document), without
  // the whitespace in between.
  std::string_view rawUntilHere(const char* start) {
    const char* end = nullptr;
    if (doc_.current_location().get(end) != simdjson::SUCCESS) end = docEnd_;
    while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\r' || end[-1] == '\t')) --end;
    if (end <= start || *start != '{' || end[-1] != '}') return {};
    return std::string_view(start, static_cast<size_t>(end - start));
  }

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

// ---- Decoder --------------------------------------------------------------------------------

Decoder::Decoder(size_t maxDocumentBytes) : impl_(std::make_unique<Impl>(maxDocumentBytes)) {}
Decoder::~Decoder() = default;

namespace {

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

}  // namespace

namespace {

const Decoder::Impl::MemoNode* findMemo(Decoder::Impl& d, const char* p, const char* end, uint32_t& next);

// Whether `raw` equals a node in the memo byte for byte: such bytes were checked when they
// entered it, so the full-Nodes echo check can skip them (a request that changes one node of
// many validates that one).
bool knownNodeBytes(Decoder::Impl& d, std::string_view raw, uint32_t& next) {
  if (!d.memoOn_ || raw.size() < Decoder::Impl::kMemoPrefix) return false;
  const Decoder::Impl::MemoNode* m = findMemo(d, raw.data(), raw.data() + raw.size(), next);
  return m != nullptr && m->raw.size() == raw.size();
}

// The extender envelope and everything in it, decoded from `padded`.
bool decodeArgsInto(Decoder::Impl& d, std::string_view padded, ExtenderArgs& out) {
  d.itemsOffset_ = SIZE_MAX;
  out.hasNodes = out.hasNodeNames = false;
  out.nodeNames.clear();
  size_t usedNodes = 0;
  bool sawPod = false;
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (foldEquals(k, "Pod")) {
      int n = d.isNull(v);
      if (n < 0) return d.at("Pod");
      if (n == 1) return d.fail("null") || d.at("Pod");
      sawPod = true;
      return d.pod(v, out.pod) || d.at("Pod");
    }
    if (foldEquals(k, "NodeNames")) {
      out.nodeNames.clear();
      int n = d.isNull(v);
      if (n < 0) return d.at("NodeNames");
      out.hasNodeNames = n == 0;
      return n == 1 || d.stringList(v, out.nodeNames) || d.at("NodeNames");
    }
    if (foldEquals(k, "Nodes")) {
      usedNodes = 0;
      int n = d.isNull(v);
      if (n < 0) return d.at("Nodes");
      out.hasNodes = n == 0;
      if (n == 1) return true;
      return d.fields(v, [&](std::string_view k2, sj::value& v2) {
        if (k2 != "items") return true;
        usedNodes = 0;  // a repeated key replaces, as in Go
        d.itemsOffset_ = static_cast<size_t>(v2.raw_json_token().data() - padded.data());
        uint32_t memoNext = 0;
        return d.elements(v2, [&](size_t, sj::value& el) {
          Node& slot = nextSlot(out.nodes, usedNodes, resetNode);
          return d.node(el, slot) && (knownNodeBytes(d, slot.raw, memoNext) || d.validNodeBytes(slot.raw));
        }) || d.at("items");
      }) || d.at("Nodes");
    }
    return true;
  }) && d.end();
  if (ok && !sawPod) ok = d.fail("missing") || d.at("Pod");
  out.nodes.resize(usedNodes);
  return ok;
}

using MemoNode = Decoder::Impl::MemoNode;
constexpr size_t kMemoPrefix = Decoder::Impl::kMemoPrefix;

uint64_t memoHash(const char* p) { return std::hash<std::string_view>{}(std::string_view(p, kMemoPrefix)); }

// Calls fn(view&) for every string view a Node holds, raw excepted.
template <typename Fn>
void forEachView(Node& n, Fn&& fn) {
  fn(n.name);
  fn(n.uid);
  fn(n.resourceVersion);
  for (KeyValue& kv : n.labels) fn(kv.key), fn(kv.value);
  for (KeyValue& kv : n.annotations) fn(kv.key), fn(kv.value);
  for (Taint& t : n.taints) fn(t.key), fn(t.value);
  for (ResourceAmount& r : n.capacity.scalar) fn(r.name);
  for (ResourceAmount& r : n.allocatable.scalar) fn(r.name);
}
// A field added to Node must be added to forEachView (and so to the memo) too.
static_assert(sizeof(Node) == 3 * sizeof(std::string_view) + 3 * sizeof(std::vector<KeyValue>) + sizeof(void*) +
                                 2 * sizeof(Resources) + sizeof(std::string_view),
              "Node changed: update forEachView");

// The memo entry holding exactly the bytes at [p, end), trying `next` first (requests list
// nodes in a stable order, so the entry after the previous hit usually is the one).
const MemoNode* findMemo(Decoder::Impl& d, const char* p, const char* end, uint32_t& next) {
  auto same = [&](const MemoNode& m) {
    return m.raw.size() <= static_cast<size_t>(end - p) && std::memcmp(p, m.raw.data(), m.raw.size()) == 0;
  };
  if (next < d.memo_.size() && same(*d.memo_[next])) return d.memo_[next++].get();
  if (static_cast<size_t>(end - p) < kMemoPrefix) return nullptr;
  auto [from, to] = d.memoIndex_.equal_range(memoHash(p));
  for (auto it = from; it != to; ++it) {
    if (same(*d.memo_[it->second])) {
      next = it->second + 1;
      return d.memo_[it->second].get();
    }
  }
  return nullptr;
}

// The array at body[open] ('[') as a list of memo entries, all of whose bytes match; its ']'
// in `close`. False as soon as one element is not a known node.
bool matchItems(Decoder::Impl& d, std::string_view body, size_t open, size_t& close) {
  d.hits_.clear();
  d.hitAt_.clear();
  const char* const begin = body.data();
  const char* const end = begin + body.size();
  const char* p = begin + open + 1;
  uint32_t next = 0;
  while (p < end && isJsonSpace(*p)) ++p;
  if (p == end || *p == ']') return false;
  for (;;) {
    const MemoNode* m = findMemo(d, p, end, next);
    if (m == nullptr) return false;
    d.hits_.push_back(m);
    d.hitAt_.push_back(static_cast<size_t>(p - begin));
    p += m->raw.size();
    while (p < end && isJsonSpace(*p)) ++p;
    if (p == end) return false;
    if (*p == ']') {
      close = static_cast<size_t>(p - begin);
      return true;
    }
    if (*p != ',') return false;
    ++p;
    while (p < end && isJsonSpace(*p)) ++p;
  }
}

// A request whose Nodes.items are all objects seen before, byte for byte: the envelope (the pod
// and the rest, with the items cut out) is decoded, and the nodes are copied from the memo.
bool decodeFromMemo(Decoder::Impl& d, std::string_view body, ExtenderArgs& out) {
  if (d.memo_.empty()) return false;
  constexpr std::string_view kItems = R"("items":[)";
  // "items" also names fields inside a pod (configMap volume items): try a few places, and
  // stop at the first that starts with a known node (that is the node list).
  size_t from = 0;
  for (int tries = 0; tries < 4; ++tries) {
    const size_t at = body.find(kItems, from);
    if (at == std::string_view::npos) return false;
    const size_t open = at + kItems.size() - 1;
    size_t close = 0;
    if (matchItems(d, body, open, close)) {
      d.compact_.assign(body.data(), open + 1);
      d.compact_.append(body.data() + close, body.size() - close);
      const size_t size = d.compact_.size();
      d.compact_.append(kDecodePadding, '\0');
      // The cut must have removed exactly the elements of the array the decoder takes as
      // Nodes.items (not text inside a string, not an earlier or later "items").
      if (!decodeArgsInto(d, std::string_view(d.compact_.data(), size), out) || !out.hasNodes ||
          out.hasNodeNames || !out.nodes.empty() || d.itemsOffset_ != open) {
        return false;
      }
      out.nodes.resize(d.hits_.size());
      for (size_t i = 0; i < d.hits_.size(); ++i) {
        out.nodes[i] = d.hits_[i]->node;
        out.nodes[i].raw = body.substr(d.hitAt_[i], d.hits_[i]->raw.size());
        const_cast<MemoNode*>(d.hits_[i])->lastUse = d.memoUse_;
      }
      d.reused_ = d.hits_.size();
      return true;
    }
    if (!d.hits_.empty()) return false;  // the node list, with a node not seen before
    from = at + 1;
  }
  return false;
}

// Adds the decoded nodes to the memo (the ones not in it yet), and drops entries no request has
// used lately once the memo holds more than one maximal document.
void remember(Decoder::Impl& d, std::vector<Node>& nodes) {
  uint32_t next = 0;
  for (Node& n : nodes) {
    if (n.raw.size() < kMemoPrefix) continue;
    const char* rawBegin = n.raw.data();
    const char* rawEnd = rawBegin + n.raw.size();
    if (const MemoNode* m = findMemo(d, rawBegin, rawEnd, next); m != nullptr && m->raw.size() == n.raw.size()) {
      const_cast<MemoNode*>(m)->lastUse = d.memoUse_;
      continue;
    }
    auto e = std::make_unique<MemoNode>();
    e->raw.assign(n.raw);
    auto inRaw = [&](std::string_view v) { return v.data() >= rawBegin && v.data() + v.size() <= rawEnd; };
    size_t arena = 0;
    forEachView(n, [&](std::string_view& v) {
      if (!v.empty() && !inRaw(v)) arena += v.size();
    });
    e->arena.reserve(arena);  // no reallocation below: views into it stay put
    e->node = n;
    forEachView(e->node, [&](std::string_view& v) {
      if (v.empty()) {
        v = {};
      } else if (inRaw(v)) {
        v = std::string_view(e->raw.data() + (v.data() - rawBegin), v.size());
      } else {
        const size_t at = e->arena.size();
        e->arena.append(v);
        v = std::string_view(e->arena.data() + at, v.size());
      }
    });
    e->node.raw = e->raw;
    e->lastUse = d.memoUse_;
    d.memoBytes_ += e->raw.size() + e->arena.size();
    d.memoIndex_.emplace(memoHash(e->raw.data()), static_cast<uint32_t>(d.memo_.size()));
    d.memo_.push_back(std::move(e));
  }
  if (d.memoBytes_ <= d.parser_.max_capacity()) return;
  std::erase_if(d.memo_, [&](const std::unique_ptr<MemoNode>& m) { return m->lastUse != d.memoUse_; });
  d.memoIndex_.clear();
  d.memoBytes_ = 0;
  for (uint32_t i = 0; i < d.memo_.size(); ++i) {
    d.memoBytes_ += d.memo_[i]->raw.size() + d.memo_[i]->arena.size();
    d.memoIndex_.emplace(memoHash(d.memo_[i]->raw.data()), i);
  }
}

}  // namespace

bool Decoder::decodeExtenderArgs(std::string_view padded, ExtenderArgs& out) {
  Impl& d = *impl_;
  ++d.memoUse_;
  d.reused_ = 0;
  if (d.memoOn_ && decodeFromMemo(d, padded, out)) return Finish{}(true, d, error_, message_);
  bool ok = decodeArgsInto(d, padded, out);
  if (ok && d.memoOn_ && out.hasNodes && !out.nodes.empty()) remember(d, out.nodes);
  return Finish{}(ok, d, error_, message_);
}

size_t Decoder::reusedNodes() const { return impl_->reused_; }

void Decoder::setNodeMemo(bool on) {
  Impl& d = *impl_;
  d.memoOn_ = on;
  if (on) return;
  d.memo_.clear();
  d.memoIndex_.clear();
  d.memoBytes_ = 0;
}

bool Decoder::decodeBindingArgs(std::string_view padded, BindingArgs& out) {
  Impl& d = *impl_;
  out = {};
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (foldEquals(k, "PodName")) return d.str(v, out.podName) || d.at("PodName");
    if (foldEquals(k, "PodNamespace")) return d.str(v, out.podNamespace) || d.at("PodNamespace");
    if (foldEquals(k, "PodUID")) return d.str(v, out.podUid) || d.at("PodUID");
    if (foldEquals(k, "Node")) return d.str(v, out.node) || d.at("Node");
    return true;
  }) && d.end();
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodePreemptionArgs(std::string_view padded, PreemptionArgs& out) {
  Impl& d = *impl_;
  out.hasVictims = out.hasMetaVictims = false;
  size_t usedFull = 0, usedMeta = 0;
  bool sawPod = false;
  auto resetVictims = [](NodeVictims& nv) {
    nv.node = {};
    nv.uids.clear();
    nv.numPdbViolations = 0;
  };
  // One map value: {"Pods":[...], "NumPDBViolations":n}; full pods or {"UID":...} entries.
  auto victims = [&](sj::value& v, NodeVictims& nv, bool full, size_t& podsUsed) {
    return d.fields(v, [&](std::string_view k, sj::value& val) {
      if (foldEquals(k, "Pods")) {
        nv.uids.clear();
        podsUsed = 0;
        return d.elements(val, [&](size_t, sj::value& el) {
          if (full) {
            Pod& p = nextSlot(nv.pods, podsUsed, resetPod);
            if (!d.pod(el, p)) return false;
            nv.uids.push_back(p.uid);
            return true;
          }
          std::string_view uid;
          bool r = d.fields(el, [&](std::string_view k2, sj::value& v2) {
            return !foldEquals(k2, "UID") || d.str(v2, uid) || d.at("UID");
          });
          nv.uids.push_back(uid);
          return r;
        }) || d.at("Pods");
      }
      if (foldEquals(k, "NumPDBViolations")) return d.i64(val, nv.numPdbViolations) || d.at("NumPDBViolations");
      return true;
    });
  };
  auto victimMap = [&](sj::value& v, std::vector<NodeVictims>& list, size_t& used, bool full, bool& has,
                       const char* name) {
    used = 0;
    int n = d.isNull(v);
    if (n < 0) return d.at(name);
    has = n == 0;
    if (n == 1) return true;
    return d.fields(v, [&](std::string_view node, sj::value& val) {
      NodeVictims& nv = nextSlot(list, used, resetVictims);
      nv.node = node;
      size_t podsUsed = 0;
      bool r = victims(val, nv, full, podsUsed);
      nv.pods.resize(podsUsed);
      return r || d.at(node);
    }) || d.at(name);
  };
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (foldEquals(k, "Pod")) {
      int n = d.isNull(v);
      if (n < 0) return d.at("Pod");
      if (n == 1) return d.fail("null") || d.at("Pod");
      sawPod = true;
      return d.pod(v, out.pod) || d.at("Pod");
    }
    if (foldEquals(k, "NodeNameToVictims")) {
      return victimMap(v, out.nodeNameToVictims, usedFull, true, out.hasVictims, "NodeNameToVictims");
    }
    if (foldEquals(k, "NodeNameToMetaVictims")) {
      return victimMap(v, out.nodeNameToMetaVictims, usedMeta, false, out.hasMetaVictims, "NodeNameToMetaVictims");
    }
    return true;
  }) && d.end();
  if (ok && !sawPod) ok = d.fail("missing") || d.at("Pod");
  out.nodeNameToVictims.resize(usedFull);
  out.nodeNameToMetaVictims.resize(usedMeta);
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodePod(std::string_view padded, Pod& out) {
  Impl& d = *impl_;
  sj::object root;
  bool ok = d.begin(padded, root) && d.pod(root, out) && d.end();
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodeNode(std::string_view padded, Node& out) {
  Impl& d = *impl_;
  sj::object root;
  bool ok = d.begin(padded, root) && d.node(root, out, Impl::firstByte(padded)) && d.end();
  return Finish{}(ok, d, error_, message_);
}

namespace {

// A list response (`kubectl get nodes -o json`, a LIST call): items decoded into reused slots
// by `item`, and the list's resourceVersion and continue token.
template <typename List, typename Reset, typename Item>
bool decodeList(Decoder::Impl& d, std::string_view padded, List& out, Reset reset, Item item) {
  out.resourceVersion = out.continueToken = {};
  size_t used = 0;
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (k == "items") {
      used = 0;
      return d.elements(v, [&](size_t, sj::value& el) { return item(el, nextSlot(out.items, used, reset)); }) ||
             d.at("items");
    }
    if (k == "metadata") {
      return d.fields(v, [&](std::string_view k2, sj::value& v2) {
        if (k2 == "resourceVersion") return d.str(v2, out.resourceVersion) || d.at(k2);
        if (k2 == "continue") return d.str(v2, out.continueToken) || d.at(k2);
        return true;
      }) || d.at("metadata");
    }
    return true;
  }) && d.end();
  out.items.resize(used);
  return ok;
}

}  // namespace

bool Decoder::decodeNodeList(std::string_view padded, NodeList& out) {
  Impl& d = *impl_;
  const bool ok = decodeList(d, padded, out, resetNode, [&](sj::value& el, Node& n) { return d.node(el, n); });
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodePodList(std::string_view padded, PodList& out) {
  Impl& d = *impl_;
  const bool ok = decodeList(d, padded, out, resetPod, [&](sj::value& el, Pod& p) { return d.pod(el, p); });
  return Finish{}(ok, d, error_, message_);
}

bool Decoder::decodeWatchEvent(std::string_view padded, ObjectKind kind, WatchEvent& out) {
  Impl& d = *impl_;
  out.kind = {};
  out.resourceVersion = {};
  out.initialEventsEnd = false;
  out.status = {};
  resetPod(out.pod);
  resetNode(out.node);
  bool sawType = false, sawObject = false;
  sj::object root;
  bool ok = d.begin(padded, root) && d.objectFields(root, [&](std::string_view k, sj::value& v) {
    if (k == "type") {
      std::string_view t;
      if (!d.str(v, t)) return d.at("type");
      sawType = true;
      if (t == "ADDED") out.type = WatchEventType::Added;
      else if (t == "MODIFIED") out.type = WatchEventType::Modified;
      else if (t == "DELETED") out.type = WatchEventType::Deleted;
      else if (t == "BOOKMARK") out.type = WatchEventType::Bookmark;
      else if (t == "ERROR") out.type = WatchEventType::Error;
      else return d.fail("unknown event type \"" + std::string(t.substr(0, 32)) + "\"") || d.at("type");
      return true;
    }
    if (k != "object") return true;
    sawObject = true;
    // The object is a Pod, a Node or (ERROR) a Status. Its shape tells which, whatever the
    // order of "type" and "object": Status has a string "status" and top-level code/reason/
    // message; Pod and Node keep theirs under metadata/spec/status.
    d.beginPod();
    Pod& p = out.pod;
    Node& n = out.node;
    Impl::MetaOut m = kind == ObjectKind::Pod
                          ? Impl::MetaOut{&p.name, &p.namespace_, &p.uid, &p.resourceVersion, &p.labels,
                                          &p.annotations, &p.ownerReferences, &p.terminating}
                          : Impl::MetaOut{&n.name, nullptr, &n.uid, &n.resourceVersion, &n.labels, &n.annotations,
                                          nullptr, nullptr};
    const char* start = v.raw_json_token().data();
    bool r = d.fields(v, [&](std::string_view k2, sj::value& v2) {
      bool ok2 = true;
      if (k2 == "kind") {
        ok2 = d.str(v2, out.kind);
      } else if (k2 == "metadata") {
        ok2 = d.meta(v2, m);
      } else if (k2 == "spec") {
        ok2 = kind == ObjectKind::Pod ? d.podSpec(v2, p) : d.nodeSpec(v2, n);
      } else if (k2 == "status") {
        sj::json_type t;
        if (v2.type().get(t) != simdjson::SUCCESS) return d.fail("invalid JSON") || d.at(k2);
        if (t == sj::json_type::string) ok2 = d.str(v2, out.status.status);
        else ok2 = kind == ObjectKind::Pod ? d.podStatus(v2, p) : d.nodeStatus(v2, n);
      } else if (k2 == "code") {
        ok2 = d.i32(v2, out.status.code);
      } else if (k2 == "reason") {
        ok2 = d.str(v2, out.status.reason);
      } else if (k2 == "message") {
        ok2 = d.str(v2, out.status.message);
      }
      return ok2 || d.at(k2);
    });
    if (!r) return d.at("object");
    if (kind == ObjectKind::Pod) {
      if (!d.finishPod(p)) return d.at("object");
    } else {
      n.raw = d.rawUntilHere(start);
    }
    return true;
  }) && d.end();
  if (ok && (!sawType || !sawObject)) ok = d.fail(!sawType ? "missing type" : "missing object");
  if (ok) {
    const auto& annotations = kind == ObjectKind::Pod ? out.pod.annotations : out.node.annotations;
    out.resourceVersion = kind == ObjectKind::Pod ? out.pod.resourceVersion : out.node.resourceVersion;
    if (out.type == WatchEventType::Bookmark) {
      const std::string_view* v = findKey(annotations, "k8s.io/initial-events-end");
      out.initialEventsEnd = v != nullptr && *v == "true";
    }
  }
  return Finish{}(ok, d, error_, message_);
}

// ---- PaddedBuffer ----------------------------------------------------------------------------

void PaddedBuffer::assign(std::string_view bytes) {
  size_ = bytes.size();
  data_.assign(bytes);
  data_.append(kDecodePadding, '\0');
}

bool PaddedBuffer::loadFile(const std::string& path, std::string& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err = "cannot open " + path;
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    err = "cannot read " + path;
    return false;
  }
  assign(ss.str());
  return true;
}

}  // namespace fleetsched::codec
