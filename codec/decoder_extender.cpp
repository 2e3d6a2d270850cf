// The Decoder's extender requests: the filter/prioritize envelope with its full-Nodes memo, and
// the bind and preempt arguments.
#include "codec/decoder_internal.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsched::codec {

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

}  // namespace fleetsched::codec
