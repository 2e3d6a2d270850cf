#include "codec/encoder.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "codec/json_writer.h"

namespace fleetsched::codec {

namespace {

// Map keys in Go's order: bytewise. The first 16 bytes of each name, loaded big-endian, decide
// almost every comparison with two integer compares; ties fall back to the full names, then
// to the input position so that of duplicate names the last one can win.
struct SortKey {
  uint64_t hi = 0;
  uint64_t lo = 0;
  uint32_t index = 0;
};

template <typename NameOf>
void sortedOrder(size_t n, NameOf nameOf, std::vector<SortKey>& keys) {
  keys.resize(n);
  for (size_t i = 0; i < n; ++i) {
    std::string_view name = nameOf(i);
    keys[i] = {nameSortPrefix(name, 0), nameSortPrefix(name, 8), static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end(), [&](const SortKey& a, const SortKey& b) {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    int c = nameOf(a.index).compare(nameOf(b.index));
    if (c != 0) return c < 0;
    return a.index < b.index;
  });
}

// Scratch for the sort; the encoders run on the reactor thread, one call at a time per thread.
thread_local std::vector<SortKey> tlsKeys;

// A failed map repeats a handful of reasons thousands of times: escape each distinct reason
// once per map and copy its bytes after that. Keyed by the view's address and length, which
// cannot change during one encode call.
class ReasonMemo {
 public:
  void write(JsonWriter<Buffer>& w, std::string_view reason) {
    for (size_t i = 0; i < used_; ++i) {
      const Entry& e = entries_[i];
      if (e.data == reason.data() && e.size == reason.size()) {
        w.repeat(e.at, e.length);
        return;
      }
    }
    const size_t at = w.size();
    w.string(reason);
    entries_[next_] = {reason.data(), reason.size(), at, w.size() - at};
    next_ = (next_ + 1) % kEntries;
    if (used_ < kEntries) ++used_;
  }

 private:
  static constexpr size_t kEntries = 8;
  struct Entry {
    const char* data;
    size_t size;
    size_t at;
    size_t length;
  };
  Entry entries_[kEntries] = {};
  size_t used_ = 0;
  size_t next_ = 0;
};

void writeFailedEntry(JsonWriter<Buffer>& w, const FailedNode& f, bool namesEncoded, ReasonMemo& reasons) {
  if (namesEncoded) {
    w.raw(f.node);
  } else {
    w.string(f.node);
  }
  w.ch(':');
  reasons.write(w, f.reason);
}

void writeFailedMap(JsonWriter<Buffer>& w, const std::vector<FailedNode>& v, bool sorted, bool namesEncoded) {
  ReasonMemo reasons;
  w.ch('{');
  if (sorted) {
    for (size_t k = 0; k < v.size(); ++k) {
      if (k != 0) w.ch(',');
      writeFailedEntry(w, v[k], namesEncoded, reasons);
    }
    w.ch('}');
    return;
  }
  sortedOrder(v.size(), [&](size_t i) { return v[i].node; }, tlsKeys);
  bool first = true;
  for (size_t k = 0; k < tlsKeys.size(); ++k) {
    const FailedNode& f = v[tlsKeys[k].index];
    if (k + 1 < tlsKeys.size() && v[tlsKeys[k + 1].index].node == f.node) continue;  // a later entry wins
    if (!first) w.ch(',');
    first = false;
    writeFailedEntry(w, f, namesEncoded, reasons);
  }
  w.ch('}');
}

size_t estimateFilterSize(const FilterResult& r) {
  size_t n = 128;
  if (r.mode == NodesMode::NodeNames) {
    for (auto s : r.nodeNames) n += s.size() + 3;
  } else {
    for (auto s : r.nodesRaw) n += s.size() + 1;
  }
  for (const auto& f : r.failedNodes) n += f.node.size() + f.reason.size() + 6;
  for (const auto& f : r.failedAndUnresolvableNodes) n += f.node.size() + f.reason.size() + 6;
  return n;
}

}  // namespace

void encodeFilterResult(const FilterResult& r, Buffer& out) {
  JsonWriter w(out);
  if (!r.error.empty()) {
    w.raw(R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":)");
    w.string(r.error);
    w.ch('}');
    return;
  }
  out.reserve(out.size() + estimateFilterSize(r));
  if (r.mode == NodesMode::NodeNames) {
    w.raw(R"({"Nodes":null,"NodeNames":[)");
    for (size_t i = 0; i < r.nodeNames.size(); ++i) {
      if (i != 0) w.ch(',');
      if (r.namesEncoded) {
        w.raw(r.nodeNames[i]);
      } else {
        w.string(r.nodeNames[i]);
      }
    }
    w.raw("],");
  } else {
    w.raw(R"({"Nodes":{"metadata":{},"items":[)");
    for (size_t i = 0; i < r.nodesRaw.size(); ++i) {
      if (i != 0) w.ch(',');
      // An input item that was null has no bytes; keep the reply valid JSON.
      w.raw(r.nodesRaw[i].empty() ? std::string_view("null") : r.nodesRaw[i]);
    }
    w.raw(R"(]},"NodeNames":null,)");
  }
  w.key("FailedNodes");
  writeFailedMap(w, r.failedNodes, r.failedSorted, r.namesEncoded);
  w.ch(',');
  w.key("FailedAndUnresolvableNodes");
  writeFailedMap(w, r.failedAndUnresolvableNodes, r.failedSorted, r.namesEncoded);
  w.raw(R"(,"Error":"")");
  w.ch('}');
}

void encodeHostPriorityList(std::span<const HostPriority> list, Buffer& out, bool hostsEncoded) {
  JsonWriter w(out);
  out.reserve(out.size() + 2 + list.size() * 40);
  w.ch('[');
  for (size_t i = 0; i < list.size(); ++i) {
    w.raw(i == 0 ? std::string_view(R"({"Host":)") : std::string_view(R"(,{"Host":)"));
    if (hostsEncoded) {
      w.raw(list[i].host);
    } else {
      w.string(list[i].host);
    }
    w.raw(R"(,"Score":)");
    w.int64(list[i].score);
    w.ch('}');
  }
  w.ch(']');
}

void appendHostScorePrefix(std::string_view quotedHost, std::string& out) {
  out.append(R"({"Host":)").append(quotedHost).append(R"(,"Score":)");
}

void encodeHostScores(std::span<const std::string_view> prefixes, std::span<const int32_t> scores, Buffer& out,
                      bool padded) {
  // One size up front (a prefix, a comma, up to 11 score bytes and '}' per entry), then plain
  // pointer writes: the reply is ~130 KB at 2,000 scored nodes and scores are 0..10 on the
  // wire. Prefixes (~60 bytes) are copied in one fixed-size block when padded: a memcpy call
  // with their length costs more than the bytes.
  size_t bound = 2 + kCopySlack;
  for (std::string_view p : prefixes) bound += p.size() + 13;
  const size_t start = out.size();
  out.resizeUninitialized(start + bound);
  char* p = out.data() + start;
  *p++ = '[';
  for (size_t i = 0; i < prefixes.size(); ++i) {
    if (i != 0) *p++ = ',';
    if (padded && prefixes[i].size() <= kCopySlack) {
      std::memcpy(p, prefixes[i].data(), kCopySlack);
    } else {
      std::memcpy(p, prefixes[i].data(), prefixes[i].size());
    }
    p += prefixes[i].size();
    const int32_t s = scores[i];
    if (s >= 0 && s <= 9) {
      *p++ = static_cast<char>('0' + s);
    } else if (s == 10) {
      *p++ = '1';
      *p++ = '0';
    } else {
      p = std::to_chars(p, p + 11, s).ptr;
    }
    *p++ = '}';
  }
  *p++ = ']';
  out.resizeUninitialized(static_cast<size_t>(p - out.data()));
}

void encodePreemptionResult(std::span<const NodeVictims> victims, Buffer& out) {
  JsonWriter w(out);
  sortedOrder(victims.size(), [&](size_t i) { return victims[i].node; }, tlsKeys);
  w.raw(R"({"NodeNameToMetaVictims":{)");
  bool first = true;
  for (size_t k = 0; k < tlsKeys.size(); ++k) {
    const NodeVictims& v = victims[tlsKeys[k].index];
    if (k + 1 < tlsKeys.size() && victims[tlsKeys[k + 1].index].node == v.node) continue;  // last wins
    if (!first) w.ch(',');
    first = false;
    w.string(v.node);
    w.raw(R"(:{"Pods":[)");
    for (size_t i = 0; i < v.uids.size(); ++i) {
      if (i != 0) w.ch(',');
      w.raw(R"({"UID":)");
      w.string(v.uids[i]);
      w.ch('}');
    }
    w.raw(R"(],"NumPDBViolations":)");
    w.int64(v.numPdbViolations);
    w.ch('}');
  }
  w.raw("}}");
}

void encodeBindingResult(std::string_view error, Buffer& out) {
  JsonWriter w(out);
  w.raw(R"({"Error":)");
  w.string(error);
  w.ch('}');
}

uint64_t nameSortPrefix(std::string_view s, size_t from) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v <<= 8;
    if (from + i < s.size()) v |= static_cast<uint8_t>(s[from + i]);
  }
  return v;
}

}  // namespace fleetsched::codec
